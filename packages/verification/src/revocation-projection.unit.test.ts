import { describe, expect, it } from 'vitest';
import type { TokenRevoked, TokenRotated } from '@tessera/contracts';
import { RevocationProjection } from './revocation-projection.js';

const hash = 'A'.repeat(43);
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
});
