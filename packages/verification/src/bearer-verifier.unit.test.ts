import { beforeAll, describe, expect, it } from 'vitest';
import type { AccessTokenClaims } from '@tessera/contracts';
import { PublicKeySet, generateSigningKey, signAccessToken, signingKeyFromJwk, type SigningKey } from '@tessera/tokens';
import { createBearerVerifier, type RevocationCheck } from './bearer-verifier.js';
import { RevocationProjection } from './revocation-projection.js';

/** Cuts in the verifier's order: signature → claims → projection (families, then cuts) → permission. */
const now = 1_800_000_000;
const issuer = 'urn:tessera:issuer';
const keys = new PublicKeySet();
let key: SigningKey;
beforeAll(async () => {
  const generated = await generateSigningKey();
  key = signingKeyFromJwk(generated.kid, generated.privateJwk);
  keys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now - 100 });
});

const v5 = (overrides: Partial<AccessTokenClaims> = {}) =>
  `Bearer ${signAccessToken({ iss: issuer, sub: 'acc', aud: 'tessera:v5', client_id: 'tsl_a', iat: now - 10, exp: now + 3600, jti: 'j', scope: 'transaction:charge', fid: 'fam', gen: 0, ...overrides }, key)}`;
const v1 = (overrides: Partial<AccessTokenClaims> = {}) =>
  `Bearer ${signAccessToken({ iss: issuer, sub: 'acc', aud: 'tessera:v1', client_id: 'tla_a', iat: now - 10, exp: now + 1800, jti: 'k', scope: '', ...overrides }, key)}`;

function verifierWith(projection: RevocationCheck) {
  return createBearerVerifier({ keys, projection, issuer, now: () => now });
}

describe('bearer verifier with cuts', () => {
  it('refuses a v5 and a v1 token issued before an account cut as revoked, and accepts one issued at notBefore', () => {
    const projection = new RevocationProjection();
    projection.apply({ type: 'AccountTokensRevoked', v: 1, accountId: 'acc', notBefore: now - 5, rejectsUntil: now + 3600, reason: 'operator', at: now - 6 });
    const verifier = verifierWith(projection);
    expect(verifier.decide(v5(), { interface: 'v5' })).toMatchObject({ status: 401, code: 'ERR_TOKEN_REVOKED' });
    expect(verifier.decide(v1(), { interface: 'v1' })).toMatchObject({ status: 401, code: 'ERR_TOKEN_REVOKED' });
    expect(verifier.decide(v5({ iat: now - 5 }), { interface: 'v5' })).toMatchObject({ status: 200 });
  });

  it('refuses a v1 token of a cut API ID: v1 tokens have no family, the credential cut is what finds them', () => {
    const projection = new RevocationProjection();
    projection.apply({ type: 'CredentialTokensRevoked', v: 1, accountId: 'acc', credentialId: 'c', apiId: 'tla_a', notBefore: now, rejectsUntil: now + 1800, reason: 'legacy-key-revoked', at: now - 1 });
    const verifier = verifierWith(projection);
    expect(verifier.decide(v1(), { interface: 'v1' })).toMatchObject({ status: 401, code: 'ERR_TOKEN_REVOKED' });
    expect(verifier.decide(v1({ client_id: 'tla_b' }), { interface: 'v1' })).toMatchObject({ status: 200 });
  });

  it('checks the cut after the claims and before the permission: an expired token is expired, a cut one without the permission is 401, not 403', () => {
    const projection = new RevocationProjection();
    projection.apply({ type: 'AccountTokensRevoked', v: 1, accountId: 'acc', notBefore: now, rejectsUntil: now + 3600, reason: 'operator', at: now - 1 });
    const verifier = verifierWith(projection);
    expect(verifier.decide(v5({ exp: now - 1 }), { interface: 'v5' })).toMatchObject({ status: 401, code: 'ERR_TOKEN_EXPIRED' });
    expect(verifier.decide(v5({ scope: '' }), { interface: 'v5', permission: 'transaction:charge' })).toMatchObject({ status: 401, code: 'ERR_TOKEN_REVOKED' });
  });

  it('a revocation check written before cuts (isRejected alone) still works, and knows only families', () => {
    const verifier = verifierWith({ isRejected: (familyId) => familyId === 'dead' });
    expect(verifier.decide(v5({ fid: 'dead' }), { interface: 'v5' })).toMatchObject({ status: 401, code: 'ERR_TOKEN_REVOKED' });
    expect(verifier.decide(v5(), { interface: 'v5' })).toMatchObject({ status: 200 });
  });
});

describe('bearer verifier: the Authorization header', () => {
  const verifier = () => verifierWith(new RevocationProjection());
  const token = () => v5().slice('Bearer '.length);

  it('takes the scheme in any case, with one or more spaces before the token and spaces after it', () => {
    for (const header of [`Bearer ${token()}`, `bearer ${token()}`, `BEARER ${token()}`, `bEaReR   ${token()}  `]) {
      expect(verifier().decide(header, { interface: 'v5' })).toMatchObject({ status: 200 });
    }
  });

  it('answers "missing" for no header, another scheme, or a word that only starts with bearer (RFC 6750 3.1)', () => {
    for (const header of [undefined, '', 'Basic dXNlcjpwYXNz', `Bearerx ${token()}`, `Bearer_${token()}`, 'Bear', `Token ${token()}`, `Bearer\t${token()}`]) {
      expect(verifier().decide(header, { interface: 'v5' })).toMatchObject({ status: 401, code: 'ERR_TOKEN_MISSING' });
    }
  });

  it('once a token is verified (and cached), the header forms around it answer as before: spaces taken, anything else after it malformed', () => {
    const one = verifier();
    const t = token();
    expect(one.decide(`Bearer ${t}`, { interface: 'v5' })).toMatchObject({ status: 200 });
    for (const header of [`Bearer ${t}`, `bearer ${t}`, `Bearer   ${t}`, `Bearer ${t}  `]) expect(one.decide(header, { interface: 'v5' })).toMatchObject({ status: 200 });
    for (const header of [`Bearer ${t} extra`, `Bearer ${t}\t`, `Bearer ${t}.`, `Bearer x${t}`, `Bearer ${t.slice(0, -1)}`]) {
      expect(one.decide(header, { interface: 'v5' })).toMatchObject({ status: 401 });
    }
    expect(one.decide(`Bearer ${t}`, { interface: 'v5' })).toMatchObject({ status: 200 });
  });

  it('answers "malformed" for the bearer scheme without one clean token after it', () => {
    for (const header of ['Bearer', 'Bearer ', 'Bearer    ', `Bearer ${token()} extra`, `Bearer ${token()}\t`]) {
      expect(verifier().decide(header, { interface: 'v5' })).toMatchObject({ status: 401 });
      expect(verifier().decide(header, { interface: 'v5' })).not.toMatchObject({ code: 'ERR_TOKEN_MISSING' });
    }
  });
});

describe('bearer verifier: the permission among the scope\'s words', () => {
  const decide = (scope: string, permission: string) => verifierWith(new RevocationProjection()).decide(v5({ scope }), { interface: 'v5', permission });

  it('finds the permission as the scope\'s first, middle, last or only word', () => {
    for (const scope of ['transaction:charge', 'transaction:charge reports:read', 'reports:read transaction:charge accounts:read', 'reports:read transaction:charge']) {
      expect(decide(scope, 'transaction:charge')).toMatchObject({ status: 200 });
    }
  });

  it('refuses (403) a word that only starts or ends with the permission, the permission inside a word, and an empty scope', () => {
    for (const scope of ['transaction:charged', 'xtransaction:charge', 'transaction:charge:all reports:read', 'reports:read pre-transaction:charge', 'transaction:chargetransaction:charge', '']) {
      expect(decide(scope, 'transaction:charge')).toMatchObject({ status: 403, code: 'ERR_PERMISSION_DENIED' });
    }
  });

  it('takes the word after an extra space between words, as splitting at each space does', () => {
    expect(decide('reports:read  transaction:charge', 'transaction:charge')).toMatchObject({ status: 200 });
    expect(decide('transaction:charge ', 'transaction:charge')).toMatchObject({ status: 200 });
  });
});
