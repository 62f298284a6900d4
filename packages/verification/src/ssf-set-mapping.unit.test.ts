import { describe, expect, it } from 'vitest';
import { RevocationProjection } from './revocation-projection.js';
import { MalformedSet, meaningOfSet, ssfEventTypes } from './ssf-set-mapping.js';

const issuer = 'https://auth.example.com';
const options = { maxAccessTokenLifetimeSeconds: 900 };
const user = (sub: string) => ({ format: 'iss_sub', iss: issuer, sub });
const session = (id: string) => ({ format: 'opaque', id });
const complex = (account: string, family?: string) => ({ format: 'complex', user: user(account), ...(family === undefined ? {} : { session: session(family) }) });
const set = (subject: unknown, type: string, payload: Record<string, unknown>) => ({ iss: issuer, aud: 'urn:x', jti: 'j', iat: 1, sub_id: subject, events: { [type]: payload } });

/** A projection fed the SET's meaning, as the receiver feeds it. */
function projectionAfter(claims: Record<string, unknown>): RevocationProjection {
  const projection = new RevocationProjection({ clockSkewSeconds: 0 });
  for (const revocation of meaningOfSet(claims, options).revocations) projection.apply(revocation);
  return projection;
}

describe('meaningOfSet: what each SET from Tessera makes a verifier refuse', () => {
  it("a family's session-revoked refuses every generation of that family, and nothing of another", () => {
    const projection = projectionAfter(set(complex('acct', 'fam-1'), ssfEventTypes.sessionRevoked, { event_timestamp: 1000, tessera_rejects_until: 5000 }));
    expect(projection.isRejected('fam-1', 0)).toBe(true);
    expect(projection.isRejected('fam-1', 7)).toBe(true);
    expect(projection.isRejected('fam-2', 0)).toBe(false);
    // Not an account cut: another token of the account stands.
    expect(projection.isCutOff({ accountId: 'acct', clientId: 'c', issuedAt: 10 })).toBe(false);
    // Forgotten once every token it refuses has expired (tessera_rejects_until), not before.
    expect(projection.forgetExpired(4999)).toBe(0);
    expect(projection.forgetExpired(5000)).toBe(1);
  });

  it("an account's session-revoked (user only) cuts the account's tokens issued before tessera_not_before", () => {
    const projection = projectionAfter(set(complex('acct'), ssfEventTypes.sessionRevoked, { event_timestamp: 1000, tessera_not_before: 990, tessera_rejects_until: 4600 }));
    expect(projection.isCutOff({ accountId: 'acct', clientId: 'c', issuedAt: 989 })).toBe(true);
    expect(projection.isCutOff({ accountId: 'acct', clientId: 'c', issuedAt: 990 })).toBe(false);
    expect(projection.isCutOff({ accountId: 'other', clientId: 'c', issuedAt: 1 })).toBe(false);
  });

  it('an account subject given as a simple iss_sub is read like the complex one', () => {
    const projection = projectionAfter(set(user('acct'), ssfEventTypes.sessionRevoked, { event_timestamp: 1000 }));
    expect(projection.isCutOff({ accountId: 'acct', clientId: 'c', issuedAt: 999 })).toBe(true);
  });

  it("credential-change with tessera_client_id cuts that client id's tokens; without it, nothing is refused", () => {
    const cut = projectionAfter(set(complex('acct'), ssfEventTypes.credentialChange, { event_timestamp: 1000, change_type: 'revoke', credential_type: 'api-key', tessera_client_id: 'login-1', tessera_not_before: 995, tessera_rejects_until: 5000 }));
    expect(cut.isCutOff({ accountId: 'acct', clientId: 'login-1', issuedAt: 994 })).toBe(true);
    expect(cut.isCutOff({ accountId: 'acct', clientId: 'login-1', issuedAt: 995 })).toBe(false);
    expect(cut.isCutOff({ accountId: 'acct', clientId: 'login-2', issuedAt: 1 })).toBe(false);
    expect(meaningOfSet(set(complex('acct'), ssfEventTypes.credentialChange, { event_timestamp: 1000, change_type: 'revoke', credential_type: 'api-key' }), options).revocations).toEqual([]);
  });

  it('token-rotated refuses the generations below `generation` only', () => {
    const projection = projectionAfter(set(complex('acct', 'fam-1'), ssfEventTypes.tokenRotated, { event_timestamp: 1000, generation: 3, tessera_rejects_until: 1900 }));
    expect(projection.isRejected('fam-1', 2)).toBe(true);
    expect(projection.isRejected('fam-1', 3)).toBe(false);
    expect(projection.isRejected('fam-1', 4)).toBe(false);
  });

  it("an older transmitter's SET, without Tessera's members: not-before is event_timestamp, the entry lasts the configured lifetime", () => {
    expect(meaningOfSet(set(complex('acct'), ssfEventTypes.sessionRevoked, { event_timestamp: 1000 }), options).revocations).toEqual([
      { type: 'AccountTokensRevoked', accountId: 'acct', notBefore: 1000, rejectsUntil: 1900 },
    ]);
    expect(meaningOfSet(set(complex('acct', 'fam'), ssfEventTypes.sessionRevoked, { event_timestamp: 1000 }), options).revocations).toEqual([
      { type: 'TokenRevoked', familyId: 'fam', generation: 0, rejectsUntil: 1900, accessExpiresAt: 1900 },
    ]);
  });

  it('the verification event gives its state and refuses nothing; claims changes refuse nothing', () => {
    expect(meaningOfSet(set(session('stream-1'), ssfEventTypes.verification, { state: 'abc' }), options)).toEqual({ revocations: [], verificationState: 'abc' });
    expect(meaningOfSet(set(complex('acct'), ssfEventTypes.tokenClaimsChange, { event_timestamp: 1, claims: { scope: 'x' } }), options)).toEqual({ revocations: [] });
  });

  it('refuses a SET that lacks what its event needs, so it is reported and never applied', () => {
    expect(() => meaningOfSet({ sub_id: complex('a', 'f') }, options)).toThrow(MalformedSet);
    expect(() => meaningOfSet(set(complex('a', 'f'), ssfEventTypes.sessionRevoked, {}), options)).toThrow('event_timestamp');
    expect(() => meaningOfSet(set(complex('a'), ssfEventTypes.tokenRotated, { event_timestamp: 1, generation: 2 }), options)).toThrow('session subject');
    expect(() => meaningOfSet(set({ format: 'email', email: 'x@example.com' }, ssfEventTypes.sessionRevoked, { event_timestamp: 1 }), options)).toThrow('neither a session nor an account');
    expect(() => meaningOfSet(set(complex('a'), ssfEventTypes.sessionRevoked, { event_timestamp: 1, tessera_rejects_until: 'soon' }), options)).toThrow('tessera_rejects_until');
  });
});
