import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { accessTokenHash, checkDpopProof, jwkThumbprint, SpentProofIds, type DpopProofCheck } from './dpop-proof.js';

const now = 1_800_000_000;
const url = 'https://auth.example.com/oauth2/token';

async function proofMaker(alg: 'ES256' | 'RS256' | 'PS256' | 'EdDSA' = 'ES256') {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return {
    jwk,
    make: (claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) =>
      new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: url, iat: now, ...claims }).setProtectedHeader({ alg, typ: 'dpop+jwt', jwk, ...header }).sign(privateKey),
  };
}

const checkAt = (overrides: Partial<DpopProofCheck> = {}): DpopProofCheck => ({ method: 'POST', url, now, clockSkewSeconds: 10, spentIds: new SpentProofIds({ clockSkewSeconds: 10 }), ...overrides });

describe('a DPoP proof', () => {
  it.each(['ES256', 'RS256', 'PS256', 'EdDSA'] as const)('made by jose with %s is taken, and its jkt is the RFC 7638 thumbprint jose computes', async (alg) => {
    const { jwk, make } = await proofMaker(alg);
    const result = checkDpopProof(await make(), checkAt());
    expect(result).toEqual({ ok: true, jkt: await calculateJwkThumbprint(jwk as JWK, 'sha256') });
  });

  it('is single use: the same jti of the same key is refused the second time', async () => {
    const { make } = await proofMaker();
    const proof = await make();
    const check = checkAt();
    expect(checkDpopProof(proof, check).ok).toBe(true);
    expect(checkDpopProof(proof, check)).toMatchObject({ ok: false, description: expect.stringContaining('used before') });
  });

  it('is refused for another method, another URL, outside its window, or without the presented token\'s ath', async () => {
    const { make } = await proofMaker();
    const refusal = async (claims: Record<string, unknown>, check: Partial<DpopProofCheck> = {}) => checkDpopProof(await make(claims), checkAt(check));
    expect(await refusal({ htm: 'GET' })).toMatchObject({ ok: false, description: expect.stringContaining('htm') });
    expect(await refusal({ htu: 'https://auth.example.com/oauth2/introspect' })).toMatchObject({ ok: false, description: expect.stringContaining('htu') });
    expect(await refusal({ iat: now - 71 })).toMatchObject({ ok: false, description: expect.stringContaining('iat') });
    expect(await refusal({ iat: now + 11 })).toMatchObject({ ok: false, description: expect.stringContaining('iat') });
    expect(await refusal({}, { accessToken: 'eyJ.token.x' })).toMatchObject({ ok: false, description: expect.stringContaining('ath') });
    expect(await refusal({ ath: accessTokenHash('eyJ.token.x') }, { accessToken: 'eyJ.token.y' })).toMatchObject({ ok: false, description: expect.stringContaining('ath') });
    // Within the window and the skew, and the URL compared after normalisation, without its query.
    expect((await refusal({ iat: now - 70 })).ok).toBe(true);
    expect((await refusal({ htu: 'HTTPS://Auth.Example.com:443/oauth2/token?x=1' })).ok).toBe(true);
    expect((await refusal({ ath: accessTokenHash('eyJ.token.x') }, { accessToken: 'eyJ.token.x' })).ok).toBe(true);
  });

  it('is refused when its header is not a DPoP proof\'s: typ, a symmetric or absent alg, a private jwk, a key that does not fit', async () => {
    const { make, jwk } = await proofMaker();
    expect(checkDpopProof(await make({}, { typ: 'JWT' }), checkAt())).toMatchObject({ ok: false, description: expect.stringContaining('typ') });
    const rsa = await proofMaker('RS256');
    expect(checkDpopProof(await rsa.make({}, { jwk }), checkAt())).toMatchObject({ ok: false, description: expect.stringContaining('does not fit') });
    const hs = await new SignJWT({ jti: 'a', htm: 'POST', htu: url, iat: now }).setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk }).sign(new Uint8Array(32));
    expect(checkDpopProof(hs, checkAt())).toMatchObject({ ok: false, description: expect.stringContaining('alg') });
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const privateJwk = privateKey.export({ format: 'jwk' });
    expect(checkDpopProof(await make({}, { jwk: privateJwk }), checkAt())).toMatchObject({ ok: false, description: expect.stringContaining('public key') });
    // Signed by one key, naming another.
    const other = await proofMaker();
    expect(checkDpopProof(await make({}, { jwk: other.jwk }), checkAt())).toMatchObject({ ok: false, description: expect.stringContaining('signature') });
    expect(checkDpopProof('a.b', checkAt())).toMatchObject({ ok: false });
  });

  it('checks the signature of every proof, also when its header was seen before', async () => {
    const { make, jwk } = await proofMaker();
    const check = checkAt();
    expect(checkDpopProof(await make(), check).ok).toBe(true);
    // Another key signs a proof under the same header (the first key's jwk): refused.
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ jti: 'forged', htm: 'POST', htu: url, iat: now }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(privateKey);
    expect(checkDpopProof(forged, check)).toMatchObject({ ok: false, description: expect.stringContaining('signature') });
  });

  it('names the nonce when the server requires one, and spends nothing then', async () => {
    const { make } = await proofMaker();
    const check = checkAt({ acceptsNonce: (nonce) => nonce === 'n-1' });
    const without = await make();
    expect(checkDpopProof(without, check)).toMatchObject({ ok: false, code: 'ERR_DPOP_NONCE_REQUIRED' });
    expect(check.spentIds.size).toBe(0);
    expect(checkDpopProof(await make({ nonce: 'n-1' }), check).ok).toBe(true);
  });
});

describe('jwkThumbprint', () => {
  it('is RFC 7638 section 3.1\'s example', () => {
    const jwk = {
      kty: 'RSA',
      n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
      e: 'AQAB',
      alg: 'RS256',
      kid: '2011-04-29',
    };
    expect(jwkThumbprint(jwk)).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });
});

describe('SpentProofIds', () => {
  it('forgets an id once its proof is too old to be taken, and no sooner', () => {
    const ids = new SpentProofIds({ clockSkewSeconds: 10 });
    expect(ids.spend('k', 'a', now, now)).toBe(true);
    expect(ids.spend('k', 'a', now, now + 70)).toBe(false);
    expect(ids.spend('k', 'b', now + 71, now + 71)).toBe(true);
    expect(ids.size).toBe(1);
  });

  it('when full, forgets the oldest and refuses anything as old as it, so no replay gets through', () => {
    const ids = new SpentProofIds({ clockSkewSeconds: 10, capacity: 2 });
    expect(ids.spend('k', 'a', now - 5, now)).toBe(true);
    expect(ids.spend('k', 'b', now - 3, now)).toBe(true);
    expect(ids.spend('k', 'c', now, now)).toBe(true);
    expect(ids.size).toBe(2);
    // "a" is forgotten, but a replay of it is refused by its age.
    expect(ids.spend('k', 'a', now - 5, now)).toBe(false);
    expect(ids.spend('k', 'd', now - 5, now)).toBe(false);
    // A fresh proof still gets in.
    expect(ids.spend('k', 'e', now, now)).toBe(true);
  });
});
