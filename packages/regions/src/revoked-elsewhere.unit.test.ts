import { describe, expect, it } from 'vitest';
import type { TokenRevoked } from '@tessera/contracts';
import { RevokedElsewhere } from './revoked-elsewhere.js';

const revoked = (familyId: string): TokenRevoked => ({ type: 'TokenRevoked', v: 1, familyId, accountId: 'acc', generation: 0, revokedAt: 1, accessExpiresAt: 3601 });

describe('revocations of this region\'s families recorded in another region', () => {
  it('folds in only families homed here (bare ids where TESSERA_BARE_FAMILY_REGION says), once each', () => {
    let now = 1000;
    const inA = new RevokedElsewhere({ own: 'a', keepSeconds: 100, now: () => now });
    expect(inA.apply(revoked('a_8mQx1P0bFh3w7ZkqS2cTnA'))).toBe(true);
    expect(inA.apply(revoked('a_8mQx1P0bFh3w7ZkqS2cTnA'))).toBe(false);
    expect(inA.apply(revoked('b_8mQx1P0bFh3w7ZkqS2cTnA'))).toBe(false);
    expect(inA.apply(revoked('8mQx1P0bFh3w7ZkqS2cTnA'))).toBe(true);
    expect(new RevokedElsewhere({ own: 'a', bareFamilies: 'b', keepSeconds: 100, now: () => now }).apply(revoked('8mQx1P0bFh3w7ZkqS2cTnA'))).toBe(false);
    expect([inA.has('a_8mQx1P0bFh3w7ZkqS2cTnA'), inA.has('b_8mQx1P0bFh3w7ZkqS2cTnA'), inA.applied]).toEqual([true, false, 2]);
    now = 1099;
    inA.forgetExpired(now);
    expect(inA.has('a_8mQx1P0bFh3w7ZkqS2cTnA')).toBe(true);
    inA.forgetExpired(1100);
    expect(inA.has('a_8mQx1P0bFh3w7ZkqS2cTnA')).toBe(false);
  });
});
