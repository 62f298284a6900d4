import { z } from 'zod';
import { sharedSignalsEvents } from './shared-signals-events.js';
import { traceparentPattern } from './trace-context.js';

/**
 * Every event Tessera writes. Payloads carry ids, times (epoch seconds) and keyed
 * hashes — never a secret. Each event is versioned by `type` + `v` so readers can
 * upcast old shapes without guessing.
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
 * `legacy-key-revoked`, `permissions-changed` (the CLI's --revoke-tokens). A string rather than an enum, so
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

export const LegacyTokenIssued = z.object({
  type: z.literal('LegacyTokenIssued'),
  v: z.literal(1),
  accountId: id,
  credentialId: id,
  apiId: id,
  jti: id,
  issuedAt: epochSeconds,
  expiresAt: epochSeconds,
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
 * Failed authentications are audited as counts, never one event per failure, so an attacker
 * cannot fill the disk: one event per credential per minute, and one per minute for every
 * attempt that named no known credential (whose presented id is not kept: it may be a secret
 * pasted into the wrong field).
 */
export const AuthenticationFailuresCounted = z.object({
  type: z.literal('AuthenticationFailuresCounted'),
  v: z.literal(1),
  interface: z.enum(['v5', 'v1']),
  /** Absent for attempts that named no known credential. */
  accountId: id.optional(),
  credentialId: id.optional(),
  /** The API Login ID (v5) or API ID (v1) the attempts named, when it is a known one. */
  clientId: id.optional(),
  /** Epoch seconds at the start of the minute counted. */
  minute: epochSeconds,
  count: z.number().int().positive(),
});

/** Admin API scopes (docs/audit.md). Events hold strings, so a scope added later never breaks an older reader. */
export const adminScopes = ['audit:read', 'tokens:revoke', 'ssf:receivers'] as const;
export type AdminScope = (typeof adminScopes)[number];

/** An admin token for /admin/v1/*: stored only as a keyed hash, like every other secret. */
export const AdminTokenIssued = z.object({
  type: z.literal('AdminTokenIssued'),
  v: z.literal(1),
  adminTokenId: id,
  name: z.string().min(1).max(200),
  scopes: z.array(z.string().min(1).max(64)),
  tokenHash: keyedHash,
  hashingKey,
  at: epochSeconds,
  /** From this instant on the token is refused. Absent: it never expires (every token issued before expiries existed). */
  expiresAt: epochSeconds.optional(),
});

export const AdminTokenRevoked = z.object({
  type: z.literal('AdminTokenRevoked'),
  v: z.literal(1),
  adminTokenId: id,
  at: epochSeconds,
});

/**
 * The secret-hashing key the log is written with, recorded by the first writer that appends to a
 * log (a server also records it on a log written before this event existed): only its keyed
 * fingerprint, never the key. Every writer compares its own key with it before its first append.
 */
export const SecretHashingKeyRecorded = z.object({
  type: z.literal('SecretHashingKeyRecorded'),
  v: z.literal(1),
  fingerprint: keyFingerprint,
  at: epochSeconds,
});

/**
 * `tessera keys rotate-hashing`: new hashes are made with the key `fingerprint` from now on. The
 * previous key is retired, and kept to check the hashes it made for as long as they can be presented.
 */
export const SecretHashingKeyRotated = z.object({
  type: z.literal('SecretHashingKeyRotated'),
  v: z.literal(1),
  fingerprint: keyFingerprint,
  previousFingerprint: keyFingerprint,
  at: epochSeconds,
});

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'SHA-256, hex');

/**
 * The archive's trust anchors, in a stream that is never archived (docs/audit.md, "The trust
 * model"): an archive signing key Tessera made in its data folder (`made`), or one that had signed
 * an archive written before anchors were recorded and was taken on first use (`adopted`). Only
 * entries signed by a key recorded here count; a public key dropped into the archive's `keys/` does not.
 */
export const ArchiveKeyTrusted = z.object({
  type: z.literal('ArchiveKeyTrusted'),
  v: z.literal(1),
  /** SHA-256 (hex) of the public key's DER (SubjectPublicKeyInfo), as the archive names its key files. */
  fingerprint: sha256Hex,
  source: z.enum(['made', 'adopted']),
  at: epochSeconds,
});

/**
 * The archive manifest's head after an archiving run added to it: the manifest must still reach
 * this entry, unchanged, for the archive to be trusted, so a cut tail, a replaced `manifest/` or a
 * rollback to an older copy is seen.
 */
export const ArchiveHeadRecorded = z.object({
  type: z.literal('ArchiveHeadRecorded'),
  v: z.literal(1),
  sequence: z.number().int().positive(),
  /** SHA-256 (hex) of that entry's file. */
  sha256: sha256Hex,
  at: epochSeconds,
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
 * A revocation another region made, as this region's Shared Signals transmitter received it from
 * the mirrored topic (docs/shared-signals.md, "Several regions"): recorded so that this region's
 * receivers get it like a local one, from the log, with the same durable delivery. Never published
 * by the relay (the other region already did), and read by nothing but the transmitter and the
 * audit trail: the revocation itself reached this region's read models from the topic.
 */
export const RevocationMirrored = z.object({
  type: z.literal('RevocationMirrored'),
  v: z.literal(1),
  /** The region whose log recorded the revocation. */
  region: z.string().regex(/^[a-z0-9]{1,16}$/),
  /** Its event id there: a redelivery is recorded once. */
  sourceEventId: id,
  /** Epoch milliseconds when that region's log recorded it. */
  sourceRecordedAt: z.number().int().nonnegative(),
  revocation: z.discriminatedUnion('type', [TokenRevoked, AccountTokensRevoked, CredentialTokensRevoked]),
});

export const TesseraEvent = z.discriminatedUnion('type', [
  AccountRegistered,
  ApiCredentialIssued,
  ApiCredentialRevoked,
  LegacyCredentialIssued,
  LegacyCredentialRevoked,
  PermissionsChanged,
  AccountTokensRevoked,
  CredentialTokensRevoked,
  TokenIssued,
  TokenRotated,
  TokenRevoked,
  LegacyTokenIssued,
  SigningKeyPublished,
  SigningKeyRetired,
  AuthenticationFailuresCounted,
  AdminTokenIssued,
  AdminTokenRevoked,
  SecretHashingKeyRecorded,
  SecretHashingKeyRotated,
  ArchiveKeyTrusted,
  ArchiveHeadRecorded,
  ...sharedSignalsEvents,
  ControlRegionChanged,
  RevocationMirrored,
]);

export type AccountRegistered = z.infer<typeof AccountRegistered>;
export type ApiCredentialIssued = z.infer<typeof ApiCredentialIssued>;
export type ApiCredentialRevoked = z.infer<typeof ApiCredentialRevoked>;
export type LegacyCredentialIssued = z.infer<typeof LegacyCredentialIssued>;
export type LegacyCredentialRevoked = z.infer<typeof LegacyCredentialRevoked>;
export type PermissionsChanged = z.infer<typeof PermissionsChanged>;
export type AccountTokensRevoked = z.infer<typeof AccountTokensRevoked>;
export type CredentialTokensRevoked = z.infer<typeof CredentialTokensRevoked>;
export type TokenIssued = z.infer<typeof TokenIssued>;
export type TokenRotated = z.infer<typeof TokenRotated>;
export type TokenRevoked = z.infer<typeof TokenRevoked>;
export type LegacyTokenIssued = z.infer<typeof LegacyTokenIssued>;
export type AuthenticationFailuresCounted = z.infer<typeof AuthenticationFailuresCounted>;
export type SigningKeyPublished = z.infer<typeof SigningKeyPublished>;
export type SigningKeyRetired = z.infer<typeof SigningKeyRetired>;
export type AdminTokenIssued = z.infer<typeof AdminTokenIssued>;
export type AdminTokenRevoked = z.infer<typeof AdminTokenRevoked>;
export type SecretHashingKeyRecorded = z.infer<typeof SecretHashingKeyRecorded>;
export type SecretHashingKeyRotated = z.infer<typeof SecretHashingKeyRotated>;
export type ArchiveKeyTrusted = z.infer<typeof ArchiveKeyTrusted>;
export type ArchiveHeadRecorded = z.infer<typeof ArchiveHeadRecorded>;
export * from './shared-signals-events.js';
export type ControlRegionChanged = z.infer<typeof ControlRegionChanged>;
export type RevocationMirrored = z.infer<typeof RevocationMirrored>;
export type TesseraEvent = z.infer<typeof TesseraEvent>;
export type TesseraEventType = TesseraEvent['type'];
/** The events whose `type` is one of `Types`. */
export type EventOfType<Types extends TesseraEventType> = Extract<TesseraEvent, { type: Types }>;

/** Narrows an event to one of the types listed: readers of a filtered read need no cast. */
export function isEventOf<const Types extends readonly TesseraEventType[]>(types: Types, event: TesseraEvent): event is EventOfType<Types[number]> {
  return types.some((type) => type === event.type);
}

export type AccountEvent =
  | AccountRegistered
  | ApiCredentialIssued
  | ApiCredentialRevoked
  | LegacyCredentialIssued
  | LegacyCredentialRevoked
  | PermissionsChanged
  | AccountTokensRevoked
  | CredentialTokensRevoked;
/** The cuts: account events that reject access tokens by account or by credential, issued before a time. */
export type TokenCutEvent = AccountTokensRevoked | CredentialTokensRevoked;
export type FamilyEvent = TokenIssued | TokenRotated | TokenRevoked;
export type SigningKeyEvent = SigningKeyPublished | SigningKeyRetired;
export type AdminTokenEvent = AdminTokenIssued | AdminTokenRevoked;
export type SecretHashingKeyEvent = SecretHashingKeyRecorded | SecretHashingKeyRotated;

export const accountEventTypes = [
  'AccountRegistered',
  'ApiCredentialIssued',
  'ApiCredentialRevoked',
  'LegacyCredentialIssued',
  'LegacyCredentialRevoked',
  'PermissionsChanged',
  'AccountTokensRevoked',
  'CredentialTokensRevoked',
] as const satisfies readonly AccountEvent['type'][];
export const tokenCutEventTypes = ['AccountTokensRevoked', 'CredentialTokensRevoked'] as const satisfies readonly TokenCutEvent['type'][];
export const familyEventTypes = ['TokenIssued', 'TokenRotated', 'TokenRevoked'] as const satisfies readonly FamilyEvent['type'][];
export const signingKeyEventTypes = ['SigningKeyPublished', 'SigningKeyRetired'] as const satisfies readonly SigningKeyEvent['type'][];
export const adminTokenEventTypes = ['AdminTokenIssued', 'AdminTokenRevoked'] as const satisfies readonly AdminTokenEvent['type'][];
export const secretHashingKeyEventTypes = ['SecretHashingKeyRecorded', 'SecretHashingKeyRotated'] as const satisfies readonly SecretHashingKeyEvent['type'][];
export type ArchiveTrustEvent = ArchiveKeyTrusted | ArchiveHeadRecorded;
export const archiveTrustEventTypes = ['ArchiveKeyTrusted', 'ArchiveHeadRecorded'] as const satisfies readonly ArchiveTrustEvent['type'][];
/**
 * What another region needs to check a refresh token of a family homed here, and to see the family
 * end: every family event, with its keyed hash, generation and expiries (`tessera.families`).
 */
export const familyCheckEventTypes = familyEventTypes;
/** The account topic carries the account events and the control region's changes. */
export const accountTopicEventTypes = [...accountEventTypes, 'ControlRegionChanged'] as const satisfies readonly TesseraEventType[];
/** What a verifier needs: rotations, revocations and cuts, plus keys. The relay publishes these. */
export const revocationEventTypes = ['TokenRotated', 'TokenRevoked', ...tokenCutEventTypes, ...signingKeyEventTypes] as const;

/**
 * Until when a rotation or revocation can reject an unexpired access token. An event written
 * before `rejectsUntil` existed implies what its writers assumed: no earlier generation
 * outlives `accessExpiresAt` (true while the TTL never went down and issuer clocks agreed).
 */
export function rejectsUntilOf(event: TokenRotated | TokenRevoked): number {
  return event.rejectsUntil ?? event.accessExpiresAt;
}

/** Narrows a recorded event to one of the types listed, as `isEventOf` does for its payload. */
export function isRecordedOf<const Types extends readonly TesseraEventType[]>(types: Types, recorded: RecordedEvent): recorded is RecordedEvent<EventOfType<Types[number]>> {
  return isEventOf(types, recorded.event);
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

/** An event as read back from the store: its payload plus where it sits in the log. */
export interface RecordedEvent<E extends TesseraEvent = TesseraEvent> {
  readonly eventId: string;
  readonly stream: string;
  readonly revision: bigint;
  readonly position: bigint;
  readonly event: E;
  readonly metadata: EventMetadata;
  /** Epoch milliseconds when the store recorded it. */
  readonly recordedAt: number;
}

export const streams = {
  account: (accountId: string) => `account-${accountId}`,
  family: (familyId: string) => `tokenfamily-${familyId}`,
  /**
   * A revocation of a family homed in another region, recorded where it arrived while the home
   * region was out of reach (docs/decisions/0018). Archived like family streams: keep the prefix.
   */
  revocations: (familyId: string) => `revocations-${familyId}`,
  /** Revocations another region made, received for this region's Shared Signals receivers; rolling, archived by age. */
  mirroredRevocations: (region: string) => `mirroredrevocations-${region}`,
  /** This region's record of the control region's changes (`tessera regions promote-control`). */
  controlRegion: () => 'controlregion',
  legacyTokens: (accountId: string) => `legacytokens-${accountId}`,
  signingKeys: () => 'signingkeys',
  /** Failed-authentication counts of one account, or of attempts that named no known credential. */
  authenticationFailures: (accountId: string | undefined) => `authfailures-${accountId ?? 'unknown'}`,
  adminToken: (adminTokenId: string) => `admintoken-${adminTokenId}`,
  /** The log's one record of its secret-hashing key: fingerprints and rotations. */
  secretHashingKey: () => 'secrethashingkey',
  /** The archive's trust anchors: the keys Tessera made and the manifest's head after each run. Never archived. */
  archiveTrust: () => 'archivetrust',
} as const;
