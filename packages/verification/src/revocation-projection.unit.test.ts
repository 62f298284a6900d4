import { describe, expect, it } from 'vitest';
import type { AccountTokensRevoked, CredentialTokensRevoked, TokenRevoked, TokenRotated } from '@tessera/contracts';
import { RevocationProjection } from './revocation-projection.js';

const hash = 'A'.repeat(43);
/** Without `rejectsUntil`, as events written before it existed: it reads as accessExpiresAt. */
const rotated = (familyId: string, generation: number, issuedAt = 1_000): TokenRotated => ({
  type: 'TokenRotated',
  v: 1,
  familyId,
  accountId: 'acc',
  credentialId: 'cred',
  apiLoginId: 'login',
  generation,
  refreshTokenHash: hash,
  jti: `jti-${generation}`,
  scope: [],
  issuedAt,
  accessExpiresAt: issuedAt + 3600,
  refreshExpiresAt: issuedAt + 604800,
});
const revoked = (familyId: string, generation: number, revokedAt = 1_000): TokenRevoked => ({
  type: 'TokenRevoked',
  v: 1,
  familyId,
  accountId: 'acc',
  generation,
  revokedAt,
  accessExpiresAt: revokedAt + 3600,
});

describe('RevocationProjection', () => {
  it('accepts every generation of a family it has never heard of', () => {
    const projection = new RevocationProjection();
    expect(projection.isRejected('f1', 0)).toBe(false);
  });

  it('rejects generations below the newest rotation and accepts the new one', () => {
    const projection = new RevocationProjection();
    projection.apply(rotated('f1', 2));
    expect(projection.isRejected('f1', 0)).toBe(true);
    expect(projection.isRejected('f1', 1)).toBe(true);
    expect(projection.isRejected('f1', 2)).toBe(false);
    expect(projection.isRejected('f2', 0)).toBe(false);
  });

  it('rejects every generation of a revoked family', () => {
    const projection = new RevocationProjection();
    projection.apply(rotated('f1', 1));
    projection.apply(revoked('f1', 1));
    expect(projection.isRejected('f1', 1)).toBe(true);
    expect(projection.isRejected('f1', 5)).toBe(true);
  });

  it('is indifferent to duplicates and order', () => {
    const inOrder = new RevocationProjection();
    const shuffled = new RevocationProjection();
    const events = [rotated('f', 1), rotated('f', 2), revoked('f', 2), rotated('g', 3)];
    for (const e of events) inOrder.apply(e);
    for (const e of [...events].reverse()) shuffled.apply(e);
    shuffled.apply(rotated('g', 1));
    for (const [fid, gen] of [['f', 0], ['f', 2], ['g', 2], ['g', 3]] as const) {
      expect(shuffled.isRejected(fid, gen)).toBe(inOrder.isRejected(fid, gen));
    }
    expect(inOrder.isRejected('g', 2)).toBe(true);
    expect(inOrder.isRejected('g', 3)).toBe(false);
  });

  it('forgets an entry only after the tokens it covers have expired plus skew', () => {
    const projection = new RevocationProjection({ clockSkewSeconds: 60 });
    projection.apply(revoked('old', 0, 1_000));
    projection.apply(revoked('new', 0, 2_000));
    expect(projection.forgetExpired(1_000 + 3600 + 59)).toBe(0);
    expect(projection.forgetExpired(1_000 + 3600 + 60)).toBe(1);
    expect(projection.isRejected('old', 0)).toBe(false);
    expect(projection.isRejected('new', 0)).toBe(true);
    expect(projection.size).toBe(1);
  });

  it('keeps a family that changed again until its newest change expires', () => {
    const projection = new RevocationProjection({ clockSkewSeconds: 0 });
    projection.apply(rotated('f', 1, 1_000));
    projection.apply(rotated('other', 1, 1_500));
    projection.apply(rotated('f', 2, 3_000));
    projection.forgetExpired(1_500 + 3600);
    expect(projection.isRejected('f', 1)).toBe(true);
    expect(projection.size).toBe(1);
  });

  it('keeps a rotation until the last expiry of the generations it rejects, even when the new one expires sooner', () => {
    const projection = new RevocationProjection({ clockSkewSeconds: 60 });
    // The TTL went from 3600 down to 5 s at the rotation: generation 0 outlives generation 1.
    projection.apply({ ...rotated('f', 1, 1_000), accessExpiresAt: 1_005, rejectsUntil: 4_000 });
    projection.forgetExpired(1_005 + 60);
    expect(projection.isRejected('f', 0)).toBe(true);
    projection.forgetExpired(4_000 + 59);
    expect(projection.isRejected('f', 0)).toBe(true);
    projection.forgetExpired(4_000 + 60);
    expect(projection.isRejected('f', 0)).toBe(false);
  });

  it('keeps a revocation until its rejectsUntil, past the expiry of the current generation', () => {
    const projection = new RevocationProjection({ clockSkewSeconds: 0 });
    projection.apply({ ...revoked('f', 3, 1_000), accessExpiresAt: 1_005, rejectsUntil: 4_000 });
    expect(projection.forgetExpired(3_999)).toBe(0);
    expect(projection.isRejected('f', 0)).toBe(true);
    expect(projection.forgetExpired(4_000)).toBe(1);
  });

  it('forgets a rotation once the generations it rejects have expired, even while the new one lives on', () => {
    const projection = new RevocationProjection({ clockSkewSeconds: 0 });
    projection.apply({ ...rotated('f', 1, 1_000), rejectsUntil: 1_500 });
    expect(projection.forgetExpired(1_500)).toBe(1);
  });

  it('never forgets an entry early, whatever order entries with different lifetimes arrived in', () => {
    const projection = new RevocationProjection({ clockSkewSeconds: 0 });
    projection.apply({ ...rotated('long', 1), rejectsUntil: 5_000 });
    projection.apply({ ...rotated('short', 1), rejectsUntil: 2_000 });
    projection.apply({ ...rotated('long', 2), rejectsUntil: 4_000 });
    projection.forgetExpired(1_999);
    expect(projection.isRejected('short', 0)).toBe(true);
    projection.forgetExpired(4_999);
    expect(projection.isRejected('long', 1)).toBe(true);
    expect(projection.forgetExpired(5_000)).toBeGreaterThan(0);
    expect(projection.size).toBe(0);
  });

  it('does not store an event whose tokens have all expired by the last forgetExpired() time', () => {
    const projection = new RevocationProjection({ clockSkewSeconds: 60 });
    projection.forgetExpired(10_000);
    projection.apply({ ...revoked('dead', 0), rejectsUntil: 10_000 - 60 });
    projection.apply({ ...revoked('live', 0), rejectsUntil: 10_000 - 59 });
    expect(projection.isRejected('dead', 0)).toBe(false);
    expect(projection.isRejected('live', 0)).toBe(true);
    expect(projection.size).toBe(1);
  });

  describe('dates past January 2038 and far in the future', () => {
    const in2038 = 2 ** 31 + 1_000;
    const lastDate = 8.64e12; // epoch seconds of JavaScript's last representable date (year 275760)
    for (const [when, at] of [
      ['after 2^31 (2038)', in2038],
      ['after 2^32 (2106)', 2 ** 32 + 7],
      ['at JavaScript\'s last date', lastDate - 3600 - 60],
    ] as const) {
      it(`keeps every generation exact ${when}`, () => {
        const projection = new RevocationProjection({ clockSkewSeconds: 60 });
        for (const [familyId, generation] of [
          ['small', 5],
          ['past-2^22', 2 ** 22 + 5],
          ['past-2^31', 2 ** 31 + 5],
          ['largest', Number.MAX_SAFE_INTEGER - 1],
        ] as const) {
          projection.apply({ ...rotated(familyId, generation, at), rejectsUntil: at + 3600 });
          expect(projection.isRejected(familyId, generation - 1), `${familyId}: ${generation - 1}`).toBe(true);
          expect(projection.isRejected(familyId, generation), `${familyId}: ${generation}`).toBe(false);
        }
        projection.apply({ ...revoked('gone', 2 ** 40, at), rejectsUntil: at + 3600 });
        expect(projection.isRejected('gone', 2 ** 40 + 1)).toBe(true);
        expect(projection.forgetExpired(at + 3600 + 59)).toBe(0);
        expect(projection.forgetExpired(at + 3600 + 60)).toBe(5);
      });
    }
  });
});

/** Cuts by account and by credential (docs/decisions/0011). */
describe('RevocationProjection cuts', () => {
  const accountCut = (accountId: string, notBefore: number, rejectsUntil = notBefore + 3600): AccountTokensRevoked => ({
    type: 'AccountTokensRevoked',
    v: 1,
    accountId,
    notBefore,
    rejectsUntil,
    reason: 'operator',
    at: notBefore - 1,
  });
  const credentialCut = (client: { apiLoginId: string } | { apiId: string }, notBefore: number, rejectsUntil = notBefore + 3600): CredentialTokensRevoked => ({
    type: 'CredentialTokensRevoked',
    v: 1,
    accountId: 'acc',
    credentialId: 'cred-old',
    ...client,
    notBefore,
    rejectsUntil,
    reason: 'transaction-key-rotated',
    at: notBefore - 1,
  });
  const token = (accountId: string, clientId: string, issuedAt: number) => ({ accountId, clientId, issuedAt });

  it('an account cut rejects every token of the account issued before notBefore, whatever its client id, and no other account', () => {
    const projection = new RevocationProjection();
    projection.apply(accountCut('acc', 2_000));
    expect(projection.isCutOff(token('acc', 'tsl_a', 1_999))).toBe(true);
    expect(projection.isCutOff(token('acc', 'tla_b', 1_000))).toBe(true);
    expect(projection.isCutOff(token('acc', 'tsl_a', 2_000))).toBe(false);
    expect(projection.isCutOff(token('other', 'tsl_c', 1_000))).toBe(false);
  });

  it('a credential cut rejects the tokens of that API Login ID or API ID issued before notBefore, and not the account\'s others', () => {
    const projection = new RevocationProjection();
    projection.apply(credentialCut({ apiLoginId: 'tsl_old' }, 2_000));
    projection.apply(credentialCut({ apiId: 'tla_old' }, 3_000));
    expect(projection.isCutOff(token('acc', 'tsl_old', 1_999))).toBe(true);
    expect(projection.isCutOff(token('acc', 'tsl_old', 2_000))).toBe(false);
    expect(projection.isCutOff(token('acc', 'tla_old', 2_999))).toBe(true);
    expect(projection.isCutOff(token('acc', 'tsl_new', 1_000))).toBe(false);
  });

  it('is indifferent to duplicates and order: the latest notBefore and the latest forgetting win', () => {
    const projection = new RevocationProjection({ clockSkewSeconds: 0 });
    projection.apply(accountCut('acc', 3_000, 5_000));
    projection.apply(accountCut('acc', 2_000, 9_000));
    projection.apply(accountCut('acc', 3_000, 5_000));
    expect(projection.isCutOff(token('acc', 'x', 2_500))).toBe(true);
    projection.forgetExpired(8_999);
    expect(projection.isCutOff(token('acc', 'x', 2_500))).toBe(true);
    expect(projection.size).toBe(1);
  });

  it('forgets a cut once every token it rejects has expired, plus clock skew, and skips one that is stale when it arrives', () => {
    const projection = new RevocationProjection({ clockSkewSeconds: 60 });
    projection.apply(accountCut('acc', 2_000, 5_000));
    projection.apply(credentialCut({ apiLoginId: 'tsl_old' }, 2_000, 5_000));
    expect(projection.forgetExpired(5_059)).toBe(0);
    expect(projection.forgetExpired(5_060)).toBe(2);
    expect(projection.isCutOff(token('acc', 'tsl_old', 1_000))).toBe(false);
    projection.apply(accountCut('late', 2_000, 5_000));
    expect(projection.size).toBe(0);
  });
});
