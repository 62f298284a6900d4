import { describe, expect, it } from 'vitest';
import type { EventMetadata, RecordedEvent, TesseraEvent } from '@tessera/events';
import { eventsByDefault, eventsSupported, ssfEventTypes } from './event-types.js';
import { setFor, setJti, type StreamView } from './set-mapping.js';

const issuer = 'https://tessera.example.test';
let position = 0n;
const recorded = (event: TesseraEvent, metadata: EventMetadata = {}): RecordedEvent => {
  position += 1n;
  return { eventId: `event-${position}`, stream: 'any', revision: 0n, position, event, metadata, recordedAt: 1_800_000_000_500 };
};
const stream = (subjects: string[], eventsDelivered: readonly string[] = eventsSupported): StreamView => ({ streamId: 'stream-1', audience: 'https://receiver.example/events', subjects: new Set(subjects), eventsDelivered });
const hash = 'h'.repeat(43);
const revoked = (reason?: 'refresh-token-reused'): TesseraEvent => ({
  type: 'TokenRevoked',
  v: 1,
  familyId: 'fam-1',
  accountId: 'acct-1',
  generation: 2,
  revokedAt: 1_800_000_000,
  accessExpiresAt: 1_800_003_600,
  ...(reason ? { reason } : {}),
});
const user = { format: 'iss_sub', iss: issuer, sub: 'acct-1' };

describe('events mapped to SETs', () => {
  it('a family revoked by revoke-oauth-token is a CAEP session-revoked for the account and the session, with every SET claim', () => {
    const event = recorded(revoked());
    const set = setFor(event, stream(['account:acct-1']), issuer);
    expect(set).toEqual({
      iss: issuer,
      aud: 'https://receiver.example/events',
      jti: setJti('stream-1', event.eventId),
      iat: 1_800_000_000,
      txn: event.eventId,
      sub_id: { format: 'complex', user, session: { format: 'opaque', id: 'fam-1' } },
      events: { [ssfEventTypes.sessionRevoked]: { event_timestamp: 1_800_000_000, initiating_entity: 'user', reason_admin: { en: 'revoked by its client (revoke-oauth-token)' }, tessera_rejects_until: 1_800_003_600 } },
    });
  });

  it('names the operator for an admin revocation and policy for reuse detection', () => {
    const byOperator = setFor(recorded(revoked(), { actor: 'admin:adm-1' }), stream(['account:acct-1']), issuer)!;
    expect(byOperator.events[ssfEventTypes.sessionRevoked]).toMatchObject({ initiating_entity: 'admin' });
    const reused = setFor(recorded(revoked('refresh-token-reused')), stream(['family:fam-1']), issuer)!;
    expect(reused.events[ssfEventTypes.sessionRevoked]).toMatchObject({ initiating_entity: 'policy', reason_admin: { en: expect.stringContaining('presented again') } });
  });

  it("another region's revocation, recorded here, is a session-revoked like a local one, naming the region, with that region's event as txn", () => {
    const event = recorded({ type: 'RevocationMirrored', v: 1, region: 'eu1', sourceEventId: 'eu1-event-9', sourceRecordedAt: 1_799_999_999_000, revocation: { type: 'TokenRevoked', v: 1, familyId: 'fam-1', accountId: 'acct-1', generation: 2, revokedAt: 1_800_000_000, accessExpiresAt: 1_800_003_600 } });
    const set = setFor(event, stream(['account:acct-1']), issuer)!;
    expect(set).toMatchObject({ jti: setJti('stream-1', event.eventId), txn: 'eu1-event-9', sub_id: { format: 'complex', user, session: { format: 'opaque', id: 'fam-1' } } });
    expect(set.events[ssfEventTypes.sessionRevoked]).toEqual({ event_timestamp: 1_800_000_000, initiating_entity: 'system', reason_admin: { en: 'revoked in region eu1' }, tessera_rejects_until: 1_800_003_600 });
    const cut = recorded({ type: 'RevocationMirrored', v: 1, region: 'eu1', sourceEventId: 'eu1-event-10', sourceRecordedAt: 1_800_000_000_000, revocation: { type: 'AccountTokensRevoked', v: 1, accountId: 'acct-1', notBefore: 1_800_000_000, rejectsUntil: 1_800_003_600, reason: 'operator', at: 1_800_000_000 } });
    expect(setFor(cut, stream(['account:acct-1']), issuer)!.events[ssfEventTypes.sessionRevoked]).toMatchObject({ initiating_entity: 'admin', reason_admin: { en: expect.stringMatching(/\(in region eu1\)$/) } });
    expect(setFor(event, stream(['account:acct-2']), issuer)).toBeUndefined();
  });

  it('sends only for the subjects the stream follows: the account, or that family', () => {
    expect(setFor(recorded(revoked()), stream(['family:fam-1']), issuer)).toBeDefined();
    expect(setFor(recorded(revoked()), stream(['account:acct-2', 'family:fam-2']), issuer)).toBeUndefined();
    expect(setFor(recorded(revoked()), stream([]), issuer)).toBeUndefined();
  });

  it('an account-wide cut is a session-revoked for the account subject alone', () => {
    const set = setFor(recorded({ type: 'AccountTokensRevoked', v: 1, accountId: 'acct-1', notBefore: 1_800_000_000, rejectsUntil: 1_800_003_600, reason: 'operator', at: 1_800_000_000 }), stream(['account:acct-1']), issuer)!;
    expect(set.sub_id).toEqual({ format: 'complex', user });
    expect(set.events[ssfEventTypes.sessionRevoked]).toMatchObject({ event_timestamp: 1_800_000_000, initiating_entity: 'admin', tessera_not_before: 1_800_000_000, tessera_rejects_until: 1_800_003_600 });
  });

  it.each([
    ['ApiCredentialRevoked', { type: 'ApiCredentialRevoked', v: 1, accountId: 'acct-1', credentialId: 'cred-1', apiLoginId: 'tsl_1', at: 1_800_000_000 }, 'API Login ID tsl_1'],
    ['LegacyCredentialRevoked', { type: 'LegacyCredentialRevoked', v: 1, accountId: 'acct-1', credentialId: 'cred-2', apiId: 'tla_1', at: 1_800_000_000 }, 'API ID tla_1'],
    [
      'CredentialTokensRevoked',
      { type: 'CredentialTokensRevoked', v: 1, accountId: 'acct-1', credentialId: 'cred-1', apiLoginId: 'tsl_1', notBefore: 1_800_000_000, rejectsUntil: 1_800_003_600, reason: 'transaction-key-rotated', at: 1_800_000_000 },
      'API Login ID tsl_1',
    ],
  ] as [string, TesseraEvent, string][])('%s is a credential-change with the fields CAEP requires', (_type, event, name) => {
    const set = setFor(recorded(event), stream(['account:acct-1']), issuer)!;
    expect(set.sub_id).toEqual({ format: 'complex', user });
    expect(set.events[ssfEventTypes.credentialChange]).toMatchObject({ credential_type: 'api-key', change_type: 'revoke', friendly_name: name, event_timestamp: 1_800_000_000 });
    // Only a cut of the credential's tokens names the client id a verifier refuses: a revoked credential alone leaves its tokens valid.
    const cut = event.type === 'CredentialTokensRevoked';
    expect(set.events[ssfEventTypes.credentialChange]!.tessera_client_id).toBe(cut ? 'tsl_1' : undefined);
    expect(set.events[ssfEventTypes.credentialChange]!.tessera_not_before).toBe(cut ? 1_800_000_000 : undefined);
  });

  it('PermissionsChanged is a token-claims-change carrying the new scope', () => {
    const set = setFor(recorded({ type: 'PermissionsChanged', v: 1, accountId: 'acct-1', permissions: ['transaction:charge', 'transaction:refund'], at: 1_800_000_000 }), stream(['account:acct-1']), issuer)!;
    expect(set.events).toEqual({ [ssfEventTypes.tokenClaimsChange]: { event_timestamp: 1_800_000_000, claims: { scope: 'transaction:charge transaction:refund' } } });
  });

  const generation = { familyId: 'fam-1', accountId: 'acct-1', credentialId: 'cred-1', apiLoginId: 'tsl_1', refreshTokenHash: hash, hashingKey: 'k1', jti: 'j', scope: [], issuedAt: 1_800_000_100, accessExpiresAt: 1_800_003_700, refreshExpiresAt: 1_800_086_500 };

  it('a rotation is a token-rotated SET with the generation below which access tokens are refused, to a stream that asked for it', () => {
    const set = setFor(recorded({ type: 'TokenRotated', v: 1, ...generation, generation: 3, rejectsUntil: 1_800_003_650 }), stream(['family:fam-1']), issuer)!;
    expect(set.sub_id).toEqual({ format: 'complex', user, session: { format: 'opaque', id: 'fam-1' } });
    expect(set.events).toEqual({ [ssfEventTypes.tokenRotated]: { event_timestamp: 1_800_000_100, generation: 3, tessera_rejects_until: 1_800_003_650 } });
    expect(setFor(recorded({ type: 'TokenRotated', v: 1, ...generation, generation: 3 }), stream(['account:acct-1'], eventsByDefault), issuer)).toBeUndefined();
    expect(setFor(recorded({ type: 'TokenRotated', v: 1, ...generation, generation: 3 }), stream(['account:acct-2']), issuer)).toBeUndefined();
  });

  it('an issuance sends nothing', () => {
    expect(setFor(recorded({ type: 'TokenIssued', v: 1, ...generation, generation: 0 }), stream(['account:acct-1']), issuer)).toBeUndefined();
  });

  it('sends only the event types the stream asked for, but always its verification events, with the state', () => {
    expect(setFor(recorded(revoked()), stream(['account:acct-1'], [ssfEventTypes.credentialChange]), issuer)).toBeUndefined();
    const verification = setFor(recorded({ type: 'SsfVerificationRequested', v: 1, streamId: 'stream-1', receiverId: 'r', state: 'abc', at: 1 }), stream([], []), issuer)!;
    expect(verification).toMatchObject({ sub_id: { format: 'opaque', id: 'stream-1' }, events: { [ssfEventTypes.verification]: { state: 'abc' } } });
    expect(setFor(recorded({ type: 'SsfVerificationRequested', v: 1, streamId: 'stream-2', receiverId: 'r', at: 1 }), stream([]), issuer)).toBeUndefined();
  });

  it('the jti is stable per stream and event, and differs between streams', () => {
    expect(setJti('stream-1', 'event-9')).toBe(setJti('stream-1', 'event-9'));
    expect(setJti('stream-1', 'event-9')).not.toBe(setJti('stream-2', 'event-9'));
  });

  it('carries no refresh-token hash or other secret of the events', () => {
    const event: TesseraEvent = { type: 'ApiCredentialRevoked', v: 1, accountId: 'acct-1', credentialId: 'cred-1', apiLoginId: 'tsl_1', at: 1 };
    const text = JSON.stringify(setFor(recorded(event), stream(['account:acct-1']), issuer));
    expect(text).not.toContain(hash);
    expect(text).not.toMatch(/Hash|tsk_|tsr_/);
  });
});
