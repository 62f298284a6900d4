import { CodedError, ssfEventTypes } from '@tessera/contracts';
import type { RevocationFacts } from './revocation-projection.js';

export { ssfEventTypes };

/**
 * What a receiver asks for by default: the revocations, and the rotations, so that a verifier it
 * feeds refuses an access token a refresh has replaced, as Tessera's own verifier does.
 */
export const defaultEventsRequested: readonly string[] = [ssfEventTypes.sessionRevoked, ssfEventTypes.credentialChange, ssfEventTypes.tokenClaimsChange, ssfEventTypes.tokenRotated];

/** What a verified SET means for the projection: the revocations to apply, or the state of a verification. */
export interface SetMeaning {
  /** What the projection applies: none for an event that refuses nothing. */
  readonly revocations: readonly RevocationFacts[];
  /** The `state` of a verification event (SSF 1.0 section 8.1.4), when the SET is one. */
  readonly verificationState?: string;
}

/** A SET that parses as JSON but does not carry what its event type needs: answered `invalid_request`, never applied. */
export class MalformedSet extends CodedError {
  readonly code = 'ERR_FEED_MESSAGE_INVALID';
}

/** A SET refused (its signature, key, issuer, audience or content), as reported to `onError`; the transmitter is told the same. */
export class SetRefused extends CodedError {
  readonly code = 'ERR_FEED_MESSAGE_INVALID';
}

/** How SETs are read where a transmitter leaves something out. */
export interface SetMappingOptions {
  /**
   * The longest access-token lifetime the transmitter issues (TESSERA_ACCESS_TOKEN_TTL, default
   * 3600): how long an entry is kept when an older transmitter's SET says nothing of it.
   */
  readonly maxAccessTokenLifetimeSeconds: number;
}

type Members = Readonly<Record<string, unknown>>;

const isMembers = (value: unknown): value is Members => typeof value === 'object' && value !== null && !Array.isArray(value);
const epochSeconds = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const text = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= 128;

/**
 * The SET's claims (signature, typ, iss and aud already checked) as the projection's events, by
 * the table of the SSF note in docs/shared-signals.md: a family's `session-revoked` refuses the
 * family; an account's (no session) cuts the account's tokens issued before `tessera_not_before`;
 * `credential-change` with `tessera_client_id` cuts that client id's; `token-rotated` refuses the
 * family's generations below `generation`. Events it does not act on (claims changed, a credential
 * revoked without a cut, types it does not know) mean nothing to refuse, and are acknowledged.
 */
export function meaningOfSet(claims: Readonly<Record<string, unknown>>, options: SetMappingOptions): SetMeaning {
  const { events, sub_id: subject } = claims;
  if (!isMembers(events)) throw new MalformedSet('the SET has no events object');
  const revocations: RevocationFacts[] = [];
  let verificationState: string | undefined;
  for (const [type, payload] of Object.entries(events)) {
    if (!isMembers(payload)) throw new MalformedSet(`the event ${type} is not an object`);
    if (type === ssfEventTypes.verification) {
      if (payload.state !== undefined && typeof payload.state !== 'string') throw new MalformedSet('the verification state is not a string');
      verificationState = payload.state ?? '';
      continue;
    }
    const revocation = revocationOf(type, payload, subject, options);
    if (revocation !== undefined) revocations.push(revocation);
  }
  return verificationState === undefined ? { revocations } : { revocations, verificationState };
}

function revocationOf(type: string, payload: Members, subject: unknown, options: SetMappingOptions): RevocationFacts | undefined {
  if (type !== ssfEventTypes.sessionRevoked && type !== ssfEventTypes.credentialChange && type !== ssfEventTypes.tokenRotated) return undefined;
  const timestamp = payload.event_timestamp;
  if (!epochSeconds(timestamp)) throw new MalformedSet(`${type} has no event_timestamp in epoch seconds`);
  const rejectsUntil = optionalSeconds(payload, 'tessera_rejects_until') ?? timestamp + options.maxAccessTokenLifetimeSeconds;
  const notBefore = optionalSeconds(payload, 'tessera_not_before') ?? timestamp;
  const { family, account } = subjectsOf(subject);
  if (type === ssfEventTypes.tokenRotated) {
    const { generation } = payload;
    if (family === undefined || !epochSeconds(generation)) throw new MalformedSet(`${type} needs a session subject and a generation`);
    return { type: 'TokenRotated', familyId: family, generation, rejectsUntil, accessExpiresAt: rejectsUntil };
  }
  if (type === ssfEventTypes.credentialChange) {
    // A credential revoked without a cut: the tokens it issued stay valid until they expire.
    if (payload.change_type !== 'revoke' || payload.tessera_client_id === undefined) return undefined;
    if (!text(payload.tessera_client_id)) throw new MalformedSet('tessera_client_id is not an id');
    return { type: 'CredentialTokensRevoked', apiLoginId: payload.tessera_client_id, notBefore, rejectsUntil };
  }
  if (family !== undefined) return { type: 'TokenRevoked', familyId: family, generation: 0, rejectsUntil, accessExpiresAt: rejectsUntil };
  if (account !== undefined) return { type: 'AccountTokensRevoked', accountId: account, notBefore, rejectsUntil };
  throw new MalformedSet(`${type} names neither a session nor an account`);
}

function optionalSeconds(payload: Members, member: string): number | undefined {
  const value = payload[member];
  if (value === undefined) return undefined;
  if (!epochSeconds(value)) throw new MalformedSet(`${member} is not epoch seconds`);
  return value;
}

/** The family (an `opaque` session) and the account (an `iss_sub` user) a `sub_id` names, simple or `complex`. */
function subjectsOf(subject: unknown): { family?: string; account?: string } {
  if (!isMembers(subject)) throw new MalformedSet('the SET has no sub_id');
  if (subject.format === 'complex') {
    const session = isMembers(subject.session) ? opaqueId(subject.session) : undefined;
    const account = isMembers(subject.user) ? accountId(subject.user) : undefined;
    return { ...(session === undefined ? {} : { family: session }), ...(account === undefined ? {} : { account }) };
  }
  const family = opaqueId(subject);
  if (family !== undefined) return { family };
  const account = accountId(subject);
  return account === undefined ? {} : { account };
}

const opaqueId = (subject: Members): string | undefined => (subject.format === 'opaque' && text(subject.id) ? subject.id : undefined);
const accountId = (subject: Members): string | undefined => (subject.format === 'iss_sub' && text(subject.sub) ? subject.sub : undefined);
