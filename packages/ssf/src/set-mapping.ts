import { createHash } from 'node:crypto';
import { rejectsUntilOf } from '@tessera/contracts';
import type { EventOfType, RecordedEvent } from '@tessera/events';
import { ssfEventTypes } from './event-types.js';

/**
 * The log events a stream can carry as SETs: a family's revocation (revoke-oauth-token, an
 * operator's, reuse detection), the cuts, a credential revoked (or rotated away), permissions
 * changed, and the receiver's verification requests; another region's revocation or cut as
 * this region recorded it (RevocationMirrored), like a local one; and rotations, to the streams
 * that ask for them. TokenIssued sends nothing.
 */
export const signalEventTypes = [
  'TokenRevoked',
  'TokenRotated',
  'AccountTokensRevoked',
  'CredentialTokensRevoked',
  'ApiCredentialRevoked',
  'LegacyCredentialRevoked',
  'PermissionsChanged',
  'SsfVerificationRequested',
  'RevocationMirrored',
] as const;

export type SignalEvent = EventOfType<(typeof signalEventTypes)[number]>;

/** What the mapping needs of a stream, as of the event's position in the log. */
export interface StreamView {
  readonly streamId: string;
  readonly audience: string;
  /** Subject keys: `account:<id>`, `family:<id>`. */
  readonly subjects: ReadonlySet<string>;
  readonly eventsDelivered: readonly string[];
}

type SubjectIdentifier = Record<string, unknown>;

/** The SET's claims (RFC 8417, SSF 1.0 section 4): everything but the signature. */
export interface SetClaims {
  readonly iss: string;
  readonly aud: string;
  readonly jti: string;
  readonly iat: number;
  readonly txn: string;
  readonly sub_id: SubjectIdentifier;
  readonly events: Record<string, Record<string, unknown>>;
}

/**
 * Stable per stream and event: a redelivery (after a crash, a retry, an unacknowledged poll)
 * carries the same jti, so a receiver drops duplicates by it.
 */
export function setJti(streamId: string, eventId: string): string {
  return createHash('sha256').update(`${streamId}\n${eventId}`).digest('base64url').slice(0, 32);
}

/**
 * The SET a stream gets for an event, or undefined when the stream does not follow its subject
 * or did not ask for its type. Pure: `iat` is when the log recorded the event, so every delivery
 * of one SET carries the same claims. Ids and times only: never a secret or a keyed hash.
 */
export function setFor(recorded: RecordedEvent, stream: StreamView, issuer: string): SetClaims | undefined {
  const built = eventOf(recorded, stream, issuer);
  if (!built) return undefined;
  const [type, subject, payload] = built;
  if (type !== ssfEventTypes.verification && !stream.eventsDelivered.includes(type)) return undefined;
  return {
    iss: issuer,
    aud: stream.audience,
    jti: setJti(stream.streamId, recorded.eventId),
    iat: Math.floor(recorded.recordedAt / 1000),
    // Another region's revocation carries that region's event id: a receiver that follows both
    // regions' transmitters sees one transaction in the SETs each sends of it.
    txn: recorded.event.type === 'RevocationMirrored' ? recorded.event.sourceEventId : recorded.eventId,
    sub_id: subject,
    events: { [type]: payload },
  };
}

/**
 * Tessera's members in a SET's event payload, beside CAEP's: what a verifier fed by SETs needs to
 * refuse exactly what Tessera's own verifier refuses, and to forget it when it no longer can
 * matter. `tessera_rejects_until`: every access token the event makes invalid has expired by
 * then. `tessera_not_before`: a cut refuses the tokens issued (`iat`) before it.
 * `tessera_client_id`: the client id a credential cut applies to. Receivers ignore members they
 * do not know (RFC 8417 section 2.2), so a CAEP receiver reads the SET as before.
 */
const cutMembers = (event: { notBefore: number; rejectsUntil: number }) => ({ tessera_not_before: event.notBefore, tessera_rejects_until: event.rejectsUntil });

const account = (issuer: string, accountId: string) => ({ format: 'iss_sub', iss: issuer, sub: accountId });
const complex = (user: SubjectIdentifier, session?: SubjectIdentifier) => ({ format: 'complex', user, ...(session ? { session } : {}) });
const english = (text: string) => ({ en: text });
const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

function eventOf(recorded: RecordedEvent, stream: StreamView, issuer: string): [string, SubjectIdentifier, Record<string, unknown>] | undefined {
  const { event } = recorded;
  const followsAccount = (accountId: string) => stream.subjects.has(`account:${accountId}`);
  switch (event.type) {
    case 'TokenRevoked': {
      if (!followsAccount(event.accountId) && !stream.subjects.has(`family:${event.familyId}`)) return undefined;
      const byOperator = recorded.metadata.actor?.startsWith('admin:') === true;
      const reused = event.reason === 'refresh-token-reused';
      return [
        ssfEventTypes.sessionRevoked,
        complex(account(issuer, event.accountId), { format: 'opaque', id: event.familyId }),
        {
          event_timestamp: event.revokedAt,
          initiating_entity: reused ? 'policy' : byOperator ? 'admin' : 'user',
          reason_admin: english(reused ? 'a used refresh token was presented again: the family was revoked' : byOperator ? 'revoked by an operator' : 'revoked by its client (revoke-oauth-token)'),
          tessera_rejects_until: rejectsUntilOf(event),
        },
      ];
    }
    case 'TokenRotated':
      if (!followsAccount(event.accountId) && !stream.subjects.has(`family:${event.familyId}`)) return undefined;
      return [
        ssfEventTypes.tokenRotated,
        complex(account(issuer, event.accountId), { format: 'opaque', id: event.familyId }),
        { event_timestamp: event.issuedAt, generation: event.generation, tessera_rejects_until: rejectsUntilOf(event) },
      ];
    case 'AccountTokensRevoked':
      // The account's every session at once: one session-revoked for the account subject (docs/shared-signals.md).
      if (!followsAccount(event.accountId)) return undefined;
      return [
        ssfEventTypes.sessionRevoked,
        complex(account(issuer, event.accountId)),
        { event_timestamp: event.at, initiating_entity: 'admin', reason_admin: english(`every token of the account issued before ${iso(event.notBefore)} was revoked (${event.reason})`), ...cutMembers(event) },
      ];
    case 'CredentialTokensRevoked': {
      if (!followsAccount(event.accountId)) return undefined;
      const client = event.apiLoginId !== undefined ? `API Login ID ${event.apiLoginId}` : `API ID ${event.apiId ?? event.credentialId}`;
      return [
        ssfEventTypes.credentialChange,
        complex(account(issuer, event.accountId)),
        {
          event_timestamp: event.at,
          credential_type: 'api-key',
          change_type: 'revoke',
          friendly_name: client,
          initiating_entity: 'admin',
          reason_admin: english(`every token issued under ${client} before ${iso(event.notBefore)} was revoked (${event.reason})`),
          tessera_client_id: event.apiLoginId ?? event.apiId ?? event.credentialId,
          ...cutMembers(event),
        },
      ];
    }
    case 'ApiCredentialRevoked':
    case 'LegacyCredentialRevoked': {
      if (!followsAccount(event.accountId)) return undefined;
      const client = event.type === 'ApiCredentialRevoked' ? `API Login ID ${event.apiLoginId}` : `API ID ${event.apiId}`;
      return [
        ssfEventTypes.credentialChange,
        complex(account(issuer, event.accountId)),
        { event_timestamp: event.at, credential_type: 'api-key', change_type: 'revoke', friendly_name: client, initiating_entity: 'admin', reason_admin: english(`${client} was revoked`) },
      ];
    }
    case 'PermissionsChanged':
      if (!followsAccount(event.accountId)) return undefined;
      return [ssfEventTypes.tokenClaimsChange, complex(account(issuer, event.accountId)), { event_timestamp: event.at, claims: { scope: event.permissions.join(' ') } }];
    case 'RevocationMirrored': {
      // As the region that made it would map it, but this region cannot tell who asked there
      // (the feed carries no actor): a client's revoke and an operator's read the same.
      const made = eventOf({ ...recorded, event: event.revocation, metadata: {} }, stream, issuer);
      if (!made) return undefined;
      const [type, subject, payload] = made;
      if (event.revocation.type !== 'TokenRevoked' || event.revocation.reason === 'refresh-token-reused') {
        const said: unknown = payload.reason_admin;
        const reason = typeof said === 'object' && said !== null && 'en' in said ? String(said.en) : 'revoked';
        return [type, subject, { ...payload, reason_admin: english(`${reason} (in region ${event.region})`) }];
      }
      return [type, subject, { ...payload, initiating_entity: 'system', reason_admin: english(`revoked in region ${event.region}`) }];
    }
    case 'SsfVerificationRequested':
      if (event.streamId !== stream.streamId) return undefined;
      return [ssfEventTypes.verification, { format: 'opaque', id: stream.streamId }, event.state === undefined ? {} : { state: event.state }];
    default:
      return undefined;
  }
}
