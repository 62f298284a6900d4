import { z } from 'zod';
import { isOneOf } from './one-of.js';
import { traceparentPattern } from './trace-context.js';

/**
 * The events Tessera publishes on its Kafka topics (`tessera.revocations`, `tessera.accounts`,
 * `tessera.families`), which downstream consumers read. Payloads carry ids, times (epoch seconds)
 * and keyed hashes — never a secret. Each event is versioned by `type` + `v` so readers can
 * upcast old shapes without guessing. Tessera writes other events to its log too; they are not
 * published, so they are not part of this contract, and a consumer skips any type it does not know.
 */

const epochSeconds = z.number().int().nonnegative();
const id = z.string().min(1).max(128);
const keyedHash = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'base64url HMAC-SHA256');
const permission = z.string().min(1).max(128);
/** A keyed fingerprint of a secret-hashing key (HMAC under the key itself over a fixed label): names the key, reveals nothing of it. */
const keyFingerprint = z.string().regex(/^[A-Za-z0-9_-]{22}$/, 'base64url, 16 bytes');
/**
 * Which secret-hashing key made the event's keyed hash: its fingerprint. Optional and still `v: 1`,
 * as `rejectsUntil` is, so that older events stay valid and older readers accept newer ones (they
 * ignore it). Absent: the log's first recorded key (`SecretHashingKeyRecorded`), the one every
 * hash was made with before keys could be rotated.
 */
const hashingKey = keyFingerprint.optional();

export const AccountRegistered = z.object({
  type: z.literal('AccountRegistered'),
  v: z.literal(1),
  accountId: id,
  name: z.string().min(1).max(200),
  permissions: z.array(permission),
  at: epochSeconds,
});

export const ApiCredentialIssued = z.object({
  type: z.literal('ApiCredentialIssued'),
  v: z.literal(1),
  accountId: id,
  credentialId: id,
  apiLoginId: id,
  transactionKeyHash: keyedHash,
  hashingKey,
  at: epochSeconds,
});

export const ApiCredentialRevoked = z.object({
  type: z.literal('ApiCredentialRevoked'),
  v: z.literal(1),
  accountId: id,
  credentialId: id,
  apiLoginId: id,
  at: epochSeconds,
});

export const LegacyCredentialIssued = z.object({
  type: z.literal('LegacyCredentialIssued'),
  v: z.literal(1),
  accountId: id,
  credentialId: id,
  apiId: id,
  apiKeyHash: keyedHash,
  hashingKey,
  at: epochSeconds,
});

export const LegacyCredentialRevoked = z.object({
  type: z.literal('LegacyCredentialRevoked'),
  v: z.literal(1),
  accountId: id,
  credentialId: id,
  apiId: id,
  at: epochSeconds,
});

export const PermissionsChanged = z.object({
  type: z.literal('PermissionsChanged'),
  v: z.literal(1),
  accountId: id,
  permissions: z.array(permission),
  at: epochSeconds,
});

/**
 * The audiences (RFC 8707 `resource` values) the account's tokens may be issued for, as a whole
 * set: the last one recorded holds. Empty: only the default audience (`tessera:v5`).
 */
export const AccountAudiencesSet = z.object({
  type: z.literal('AccountAudiencesSet'),
  v: z.literal(1),
  accountId: id,
  audiences: z.array(z.string().min(1).max(512)),
  at: epochSeconds,
});

/**
 * Whether the account's token requests must carry a DPoP proof (RFC 9449 section 5.2, the client
 * metadata `dpop_bound_access_tokens`): the last one recorded holds. None recorded: not required.
 */
export const ClientDpopSet = z.object({
  type: z.literal('ClientDpopSet'),
  v: z.literal(1),
  accountId: id,
  dpopBoundAccessTokens: z.boolean(),
  at: epochSeconds,
});

/**
 * A public JSON Web Key (RFC 7517) a client signs its `private_key_jwt` assertions with. Only the
 * public members travel: the account service refuses a key holding a private one (`d`, `p`, `q`…).
 */
export const ClientPublicJwk = z
  .object({
    kty: z.enum(['EC', 'RSA', 'OKP']),
    kid: z.string().min(1).max(128),
  })
  .catchall(z.union([z.string().max(4096), z.array(z.string().max(4096)).max(10)]));

/**
 * The public keys the account's `private_key_jwt` assertions (RFC 7523) are checked with, as a
 * whole set: the last one recorded holds. Empty and no `jwksUri`: the account cannot authenticate
 * by assertion.
 */
export const ClientKeysSet = z.object({
  type: z.literal('ClientKeysSet'),
  v: z.literal(1),
  accountId: id,
  jwks: z.object({ keys: z.array(ClientPublicJwk).max(10) }),
  /**
   * Where the keys are fetched from instead (`--jwks-url`; RFC 7591's `jwks_uri`), with `jwks`
   * empty. Optional within v1: a reader that predates it sees an account with no keys and refuses
   * its assertions, rather than failing to read the event.
   */
  jwksUri: z.string().min(1).max(2048).optional(),
  at: epochSeconds,
});

/**
 * An operator disabled the account (`tessera accounts disable`, `POST /admin/v1/accounts/{id}/disable`):
 * from now on its credentials get no token and its families no refresh. Its writer appends an
 * `AccountTokensRevoked` cut with it, so verifiers, which never read this event, refuse its live
 * access tokens through the cut (docs/decisions/0030). `actor` names who disabled it, for the audit trail.
 */
export const AccountDisabled = z.object({
  type: z.literal('AccountDisabled'),
  v: z.literal(1),
  accountId: id,
  reason: z.string().min(1).max(200).optional(),
  actor: z.string().min(1).max(128),
  at: epochSeconds,
});

/** The account may get tokens again; tokens and families from before the disable stay refused (decision 0030). */
export const AccountEnabled = z.object({
  type: z.literal('AccountEnabled'),
  v: z.literal(1),
  accountId: id,
  actor: z.string().min(1).max(128),
  at: epochSeconds,
});

/**
 * Family events are "fat": each one carries the whole state a later command needs,
 * so a family loads from its last event alone (read backwards, maxCount 1).
 */
const familyGeneration = {
  familyId: id,
  accountId: id,
  credentialId: id,
  apiLoginId: id,
  generation: z.number().int().nonnegative(),
  refreshTokenHash: keyedHash,
  /** The key `refreshTokenHash` was made with. */
  hashingKey,
  jti: id,
  scope: z.array(permission),
  /**
   * The scope the client asked for when the family was made (OAuth 2.0 `scope`): every access
   * token of the family stays within it. Absent: the account's permissions, whatever they become.
   * Optional and still `v: 1`, so readers older than the field accept the event.
   */
  requestedScope: z.array(permission).optional(),
  /**
   * The audience the client asked for with RFC 8707 `resource`, one of the account's audiences:
   * every access token of the family carries it as `aud`. Absent: `tessera:v5`.
   */
  audience: z.string().min(1).max(512).optional(),
  /**
   * DPoP (RFC 9449): the RFC 7638 thumbprint of the key the family is bound to. Its access tokens
   * carry it as `cnf.jkt`, and its refresh token works only at the token endpoint, with a proof
   * signed by that key. Absent: a bearer family.
   */
  jkt: z.string().regex(/^[A-Za-z0-9_-]{43}$/).optional(),
  issuedAt: epochSeconds,
  accessExpiresAt: epochSeconds,
  refreshExpiresAt: epochSeconds,
};

export const TokenIssued = z.object({
  type: z.literal('TokenIssued'),
  v: z.literal(1),
  ...familyGeneration,
  generation: z.literal(0),
});

/**
 * Until when an event makes tokens invalid (docs/decisions/0008): the last `exp` among the
 * access tokens it rejects, which a TTL lowered between generations or a lagging issuer clock
 * can put after the newest token's. Optional and still `v: 1` so that readers older than the
 * field accept the event (they ignore it); read it through `rejectsUntilOf`.
 */
const rejectsUntil = epochSeconds.optional();

export const TokenRotated = z.object({
  type: z.literal('TokenRotated'),
  v: z.literal(1),
  ...familyGeneration,
  /** The last expiry among generations 0 … generation − 1, which this rotation makes invalid. */
  rejectsUntil,
});

export const TokenRevoked = z.object({
  type: z.literal('TokenRevoked'),
  v: z.literal(1),
  familyId: id,
  accountId: id,
  /** The generation that was current when revoked; every generation ≤ it is dead. */
  generation: z.number().int().nonnegative(),
  revokedAt: epochSeconds,
  /** The current generation's access token expires at this time. */
  accessExpiresAt: epochSeconds,
  /** The last expiry among every generation of the family, all of which this revocation makes invalid. */
  rejectsUntil,
  /**
   * Why, when it was not revoke-oauth-token: `refresh-token-reused` is a used refresh token
   * presented again under TESSERA_REFRESH_REUSE=revoke-family (docs/decisions/0010). Optional and
   * still `v: 1`, as `rejectsUntil` is: older readers ignore it.
   */
  reason: z.enum(['refresh-token-reused']).optional(),
});

/**
 * Why a cut was made: `operator` (POST /admin/v1/accounts/{id}/revoke-tokens), `transaction-key-rotated`,
 * `legacy-key-revoked`, `permissions-changed` (the CLI's --revoke-tokens), `account-disabled` (beside `AccountDisabled`). A string rather than an enum, so
 * that a reason added later never makes an older reader refuse the event (decision 0011).
 */
const cutReason = z.string().min(1).max(64);

/**
 * An account-level cut, like Keycloak's not-before push: every access token of the account, v5 or v1,
 * whose `iat` is before `notBefore` is refused (docs/decisions/0011). Lives on the account stream.
 */
export const AccountTokensRevoked = z.object({
  type: z.literal('AccountTokensRevoked'),
  v: z.literal(1),
  accountId: id,
  /** Epoch seconds: tokens with `iat` < notBefore are refused; issuers date later tokens at or after it. */
  notBefore: epochSeconds,
  /** The last `exp` a token issued before `notBefore` can have, from the lifetimes the log shows: the cut matters until then. */
  rejectsUntil: epochSeconds,
  reason: cutReason,
  at: epochSeconds,
});

/**
 * A credential-level cut: every access token whose `client_id` is this API Login ID (v5) or API ID
 * (v1), issued before `notBefore`, is refused. Exactly one of `apiLoginId` and `apiId` is set: the
 * same field names the other account events use, so audit filters find it.
 */
export const CredentialTokensRevoked = z.object({
  type: z.literal('CredentialTokensRevoked'),
  v: z.literal(1),
  accountId: id,
  /** The credential whose key was rotated away or revoked. */
  credentialId: id,
  apiLoginId: id.optional(),
  apiId: id.optional(),
  notBefore: epochSeconds,
  rejectsUntil: epochSeconds,
  reason: cutReason,
  at: epochSeconds,
});

export const SigningKeyPublished = z.object({
  type: z.literal('SigningKeyPublished'),
  v: z.literal(1),
  kid: id,
  alg: z.literal('ES256'),
  /** Public JWK only: kty, crv, x, y. */
  publicJwk: z.object({ kty: z.literal('EC'), crv: z.literal('P-256'), x: z.string(), y: z.string() }),
  at: epochSeconds,
});

export const SigningKeyRetired = z.object({
  type: z.literal('SigningKeyRetired'),
  v: z.literal(1),
  kid: id,
  at: epochSeconds,
  /** Tokens signed by this key can be unexpired until this time; the JWKS keeps it until then. */
  retainUntil: epochSeconds,
});
/**
 * Which region writes accounts (docs/multi-region.md, "Control region"): `tessera regions
 * promote-control`. Each change carries an epoch one higher than any its writer had seen; every
 * writer of accounts refuses to append once it has seen an epoch naming another region, so a
 * region that was the control region cannot go on writing beside the new one. The epoch before
 * any change is 0 and names TESSERA_CONTROL_REGION. Published on the account topic.
 */
export const ControlRegionChanged = z.object({
  type: z.literal('ControlRegionChanged'),
  v: z.literal(1),
  /** The region that writes accounts from this epoch on. */
  region: z.string().regex(/^[a-z0-9]{1,16}$/),
  epoch: z.number().int().positive(),
  /** The region whose log recorded the change: where the command ran. */
  recordedIn: z.string().regex(/^[a-z0-9]{1,16}$/),
  at: epochSeconds,
});

/**
 * The field shapes events share. Tessera's internal events (never published) are built from the
 * same shapes, so a field means the same everywhere in the log.
 */
export const eventFields = { epochSeconds, id, keyedHash, keyFingerprint, hashingKey } as const;

/** Every event type published on one of Tessera's topics, and nothing else. */
export const PublishedEvent = z.discriminatedUnion('type', [
  AccountRegistered,
  ApiCredentialIssued,
  ApiCredentialRevoked,
  LegacyCredentialIssued,
  LegacyCredentialRevoked,
  PermissionsChanged,
  AccountAudiencesSet,
  ClientKeysSet,
  ClientDpopSet,
  AccountTokensRevoked,
  CredentialTokensRevoked,
  AccountDisabled,
  AccountEnabled,
  TokenIssued,
  TokenRotated,
  TokenRevoked,
  SigningKeyPublished,
  SigningKeyRetired,
  ControlRegionChanged,
]);

export type AccountRegistered = z.infer<typeof AccountRegistered>;
export type ApiCredentialIssued = z.infer<typeof ApiCredentialIssued>;
export type ApiCredentialRevoked = z.infer<typeof ApiCredentialRevoked>;
export type LegacyCredentialIssued = z.infer<typeof LegacyCredentialIssued>;
export type LegacyCredentialRevoked = z.infer<typeof LegacyCredentialRevoked>;
export type PermissionsChanged = z.infer<typeof PermissionsChanged>;
export type AccountAudiencesSet = z.infer<typeof AccountAudiencesSet>;
export type ClientPublicJwk = z.infer<typeof ClientPublicJwk>;
export type ClientKeysSet = z.infer<typeof ClientKeysSet>;
export type ClientDpopSet = z.infer<typeof ClientDpopSet>;
export type AccountDisabled = z.infer<typeof AccountDisabled>;
export type AccountEnabled = z.infer<typeof AccountEnabled>;
export type AccountTokensRevoked = z.infer<typeof AccountTokensRevoked>;
export type CredentialTokensRevoked = z.infer<typeof CredentialTokensRevoked>;
export type TokenIssued = z.infer<typeof TokenIssued>;
export type TokenRotated = z.infer<typeof TokenRotated>;
export type TokenRevoked = z.infer<typeof TokenRevoked>;
export type SigningKeyPublished = z.infer<typeof SigningKeyPublished>;
export type SigningKeyRetired = z.infer<typeof SigningKeyRetired>;
export type ControlRegionChanged = z.infer<typeof ControlRegionChanged>;
export type PublishedEvent = z.infer<typeof PublishedEvent>;
export type PublishedEventType = PublishedEvent['type'];
/** The published event types, in the union's order: read off the union, so the two cannot differ. */
export const publishedEventTypes: readonly PublishedEventType[] = PublishedEvent.options.map((schema) => schema.shape.type.value);

export type AccountEvent =
  | AccountRegistered
  | ApiCredentialIssued
  | ApiCredentialRevoked
  | LegacyCredentialIssued
  | LegacyCredentialRevoked
  | PermissionsChanged
  | AccountAudiencesSet
  | ClientKeysSet
  | ClientDpopSet
  | AccountTokensRevoked
  | CredentialTokensRevoked
  | AccountDisabled
  | AccountEnabled;
/** The cuts: account events that reject access tokens by account or by credential, issued before a time. */
export type TokenCutEvent = AccountTokensRevoked | CredentialTokensRevoked;
export type FamilyEvent = TokenIssued | TokenRotated | TokenRevoked;
export type SigningKeyEvent = SigningKeyPublished | SigningKeyRetired;

export const accountEventTypes = [
  'AccountRegistered',
  'ApiCredentialIssued',
  'ApiCredentialRevoked',
  'LegacyCredentialIssued',
  'LegacyCredentialRevoked',
  'PermissionsChanged',
  'AccountAudiencesSet',
  'ClientKeysSet',
  'ClientDpopSet',
  'AccountTokensRevoked',
  'CredentialTokensRevoked',
  'AccountDisabled',
  'AccountEnabled',
] as const satisfies readonly AccountEvent['type'][];
export const tokenCutEventTypes = ['AccountTokensRevoked', 'CredentialTokensRevoked'] as const satisfies readonly TokenCutEvent['type'][];
export const familyEventTypes = ['TokenIssued', 'TokenRotated', 'TokenRevoked'] as const satisfies readonly FamilyEvent['type'][];
export const signingKeyEventTypes = ['SigningKeyPublished', 'SigningKeyRetired'] as const satisfies readonly SigningKeyEvent['type'][];
/**
 * What another region needs to check a refresh token of a family homed here, and to see the family
 * end: every family event, with its keyed hash, generation and expiries (`tessera.families`).
 */
export const familyCheckEventTypes = familyEventTypes;
/** The account topic carries the account events and the control region's changes. */
export const accountTopicEventTypes = [...accountEventTypes, 'ControlRegionChanged'] as const satisfies readonly PublishedEventType[];
/** What a verifier needs: rotations, revocations and cuts, plus keys. */
export const revocationEventTypes = ['TokenRotated', 'TokenRevoked', ...tokenCutEventTypes, ...signingKeyEventTypes] as const satisfies readonly PublishedEventType[];
/**
 * What the relay publishes on the revocation topic: what a verifier elsewhere needs to reject a
 * token or trust a key, and what changes what a live token may do (a revoked credential, a
 * narrowed permission set).
 */
export const revocationTopicEventTypes = [...revocationEventTypes, 'ApiCredentialRevoked', 'LegacyCredentialRevoked', 'PermissionsChanged'] as const satisfies readonly PublishedEventType[];

/** Whether a type names a published event: a consumer skips one that does not (a newer or an internal event). */
export function isPublishedEventType(type: string): type is PublishedEventType {
  return isOneOf(publishedEventTypes, type);
}

/**
 * Until when a rotation or revocation can reject an unexpired access token. An event written
 * before `rejectsUntil` existed implies what its writers assumed: no earlier generation
 * outlives `accessExpiresAt` (true while the TTL never went down and issuer clocks agreed).
 */
export function rejectsUntilOf(event: TokenRotated | TokenRevoked): number {
  return event.rejectsUntil ?? event.accessExpiresAt;
}

/** Metadata on every event, for the audit trail and for tracing. */
export const EventMetadata = z.object({
  requestId: z.string().max(128).optional(),
  accountId: z.string().max(128).optional(),
  sourceAddress: z.string().max(128).optional(),
  actor: z.string().max(128).optional(),
  /**
   * The W3C trace context of the span that appended the event, when the writer traced it: the
   * relay continues that trace when it publishes the event (docs/operations.md, "Tracing").
   */
  traceparent: z.string().regex(traceparentPattern).optional(),
});
export type EventMetadata = z.infer<typeof EventMetadata>;
/**
 * An event as read back from the store: its payload plus where it sits in the log. Generic in its
 * event so that Tessera's own log, which holds internal events too, uses the same shape.
 */
export interface RecordedEvent<E extends { readonly type: string } = PublishedEvent> {
  readonly eventId: string;
  readonly stream: string;
  readonly revision: bigint;
  readonly position: bigint;
  readonly event: E;
  readonly metadata: EventMetadata;
  /** Epoch milliseconds when the store recorded it. */
  readonly recordedAt: number;
}

