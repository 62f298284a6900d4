import { describe, expect, it } from 'vitest';
import type { TokenIssued, TokenRevoked, TokenRotated } from '@tessera/contracts';
import { DomainError } from './errors.js';
import { FamilyCheckMaterial } from './family-check-material.js';
import { decideRemoteRevocation } from './remote-revocation.js';

const t0 = 1_800_000_000;
const hash = (c: string) => c.repeat(43);
const key = 'K'.repeat(22);
const issued: TokenIssued = {
  type: 'TokenIssued',
  v: 1,
  familyId: 'a_fam',
  accountId: 'acc',
  credentialId: 'cred',
  apiLoginId: 'login',
  generation: 0,
  refreshTokenHash: hash('a'),
  hashingKey: key,
  jti: 'j0',
  scope: [],
  issuedAt: t0,
  accessExpiresAt: t0 + 3600,
  refreshExpiresAt: t0 + 604_800,
};
const rotated = (generation: number, c: string, at: number): TokenRotated => ({
  ...issued,
  type: 'TokenRotated',
  generation,
  refreshTokenHash: hash(c),
  jti: `j${generation}`,
  issuedAt: at,
  accessExpiresAt: at + 3600,
  refreshExpiresAt: at + 604_800,
  rejectsUntil: at + 3599,
});
const revoked = (generation: number, at: number): TokenRevoked => ({ type: 'TokenRevoked', v: 1, familyId: 'a_fam', accountId: 'acc', generation, revokedAt: at, accessExpiresAt: at + 3600, rejectsUntil: at + 3600 });
/** A presented token whose keyed hash, under the key named, is `hash(c)`; under any other key it is something else. */
const presenting = (c: string) => (hashingKey: string | undefined) => (hashingKey === key ? hash(c) : hash('z'));
const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof DomainError ? error.code : String(error);
  }
  return 'no error';
};

describe('check material of another region\'s families', () => {
  it('keeps the newest generation\'s hash, whatever order the events arrive in, and ignores duplicates', () => {
    const material = new FamilyCheckMaterial();
    material.apply(rotated(2, 'c', t0 + 20));
    material.apply(issued);
    material.apply(rotated(1, 'b', t0 + 10));
    material.apply(rotated(2, 'c', t0 + 20));
    expect(material.get('a_fam')).toMatchObject({ generation: 2, refreshTokenHash: hash('c'), revoked: false, refreshExpiresAt: t0 + 20 + 604_800 });
  });

  it('holds a revocation as terminal: a rotation arriving after it moves the generation on, never un-revokes', () => {
    const material = new FamilyCheckMaterial();
    material.apply(issued);
    material.apply(revoked(0, t0 + 5));
    material.apply(rotated(1, 'b', t0 + 4));
    expect(material.get('a_fam')).toMatchObject({ generation: 1, revoked: true });
  });

  it('forgets a family once its refresh token and every access token it knows have expired, plus skew', () => {
    const material = new FamilyCheckMaterial({ clockSkewSeconds: 60 });
    material.apply(issued);
    expect(material.forgetExpired(t0 + 604_800 + 59)).toBe(0);
    expect(material.forgetExpired(t0 + 604_800 + 60)).toBe(1);
    expect(material.get('a_fam')).toBeUndefined();
  });
});

describe('a revoke decided away from the family\'s home region', () => {
  const material = () => {
    const m = new FamilyCheckMaterial();
    m.apply(issued);
    m.apply(rotated(1, 'b', t0 + 10));
    return m;
  };

  it('revokes the current, unexpired token: the whole family, at the generation seen, until its last access token expires', () => {
    const event = decideRemoteRevocation(material().get('a_fam'), presenting('b'), t0 + 20);
    expect(event).toEqual({ type: 'TokenRevoked', v: 1, familyId: 'a_fam', accountId: 'acc', generation: 1, revokedAt: t0 + 20, accessExpiresAt: t0 + 10 + 3600, rejectsUntil: t0 + 10 + 3600 });
  });

  it('leaves to the home region what it cannot prove: an unknown family, an older or newer token, a token never issued, a hash under another key', () => {
    expect(codeOf(() => decideRemoteRevocation(undefined, presenting('b'), t0))).toBe('ERR_REFRESH_TOKEN_UNPROVEN');
    expect(codeOf(() => decideRemoteRevocation(material().get('a_fam'), presenting('a'), t0 + 20))).toBe('ERR_REFRESH_TOKEN_UNPROVEN');
    expect(codeOf(() => decideRemoteRevocation(material().get('a_fam'), presenting('x'), t0 + 20))).toBe('ERR_REFRESH_TOKEN_UNPROVEN');
    const underAnotherKey = (hashingKey: string | undefined) => (hashingKey === 'L'.repeat(22) ? hash('b') : hash('q'));
    expect(codeOf(() => decideRemoteRevocation(material().get('a_fam'), underAnotherKey, t0 + 20))).toBe('ERR_REFRESH_TOKEN_UNPROVEN');
    const onlyRevocation = new FamilyCheckMaterial();
    onlyRevocation.apply({ ...revoked(0, t0), familyId: 'a_other' });
    expect(codeOf(() => decideRemoteRevocation(onlyRevocation.get('a_other'), presenting('a'), t0))).toBe('ERR_REFRESH_TOKEN_REVOKED');
  });

  it('refuses as the home region would what it can prove dead: a revoked family (any token), an expired current token', () => {
    const m = material();
    m.apply(revoked(1, t0 + 15));
    expect(codeOf(() => decideRemoteRevocation(m.get('a_fam'), presenting('x'), t0 + 20))).toBe('ERR_REFRESH_TOKEN_REVOKED');
    expect(codeOf(() => decideRemoteRevocation(material().get('a_fam'), presenting('b'), t0 + 10 + 604_800))).toBe('ERR_REFRESH_TOKEN_EXPIRED');
  });
});
