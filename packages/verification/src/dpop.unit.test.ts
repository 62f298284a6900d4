import Fastify from 'fastify';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AccessTokenClaims } from '@tessera/contracts';
import { installErrorHandlers } from '@tessera/http';
import { PublicKeySet, accessTokenHash, generateSigningKey, signAccessToken, signingKeyFromJwk, type SigningKey } from '@tessera/tokens';
import { createBearerVerifier, type AccessDecision, type PresentedRequest } from './bearer-verifier.js';
import { tesseraAuth } from './fastify-plugin.js';
import { RevocationProjection } from './revocation-projection.js';

/** RFC 9449 sections 7 and 7.1 at a resource server: tokens from signAccessToken, proofs from jose. */
const now = 1_800_000_000;
const issuer = 'urn:tessera:issuer';
const url = 'https://api.example.com/orders';
const keys = new PublicKeySet();
let key: SigningKey;

interface ProofKey {
  readonly jkt: string;
  proof(claims?: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
}

async function proofKey(alg: 'ES256' | 'RS256' | 'PS256' | 'EdDSA' = 'ES256'): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return {
    jkt: await calculateJwkThumbprint(jwk as JWK, 'sha256'),
    proof: (claims = {}, header = {}) =>
      new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: url, iat: now, ...claims }).setProtectedHeader({ alg, typ: 'dpop+jwt', jwk, ...header }).sign(privateKey),
  };
}

let holder: ProofKey;
let other: ProofKey;
beforeAll(async () => {
  const generated = await generateSigningKey();
  key = signingKeyFromJwk(generated.kid, generated.privateJwk);
  keys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now - 100 });
  holder = await proofKey();
  other = await proofKey();
});

const token = (overrides: Partial<AccessTokenClaims> = {}) =>
  signAccessToken({ iss: issuer, sub: 'acc', aud: 'tessera:v5', client_id: 'tsl_a', iat: now - 10, exp: now + 3600, jti: 'j', scope: 'orders:write', fid: 'fam', gen: 0, ...overrides }, key);
const bound = (overrides: Partial<AccessTokenClaims> = {}) => token({ cnf: { jkt: holder.jkt }, ...overrides });

const verifierWith = (projection = new RevocationProjection()) => createBearerVerifier({ keys, projection, issuer, now: () => now, clockSkewSeconds: 10 });
const requirement = { interface: 'v5', permission: 'orders:write' } as const;
const request = (dpop: PresentedRequest['dpop'], overrides: Partial<PresentedRequest> = {}): PresentedRequest => ({ method: 'POST', url, dpop, ...overrides });
const proofFor = (accessToken: string, claims: Record<string, unknown> = {}, by: ProofKey = holder) => by.proof({ ath: accessTokenHash(accessToken), ...claims });

describe('bearer verifier with DPoP-bound tokens', () => {
  it('takes a DPoP-bound token with a proof for this request, by its key, carrying its ath, and answers its claims', async () => {
    for (const alg of ['ES256', 'RS256', 'PS256', 'EdDSA'] as const) {
      const by = await proofKey(alg);
      const accessToken = token({ cnf: { jkt: by.jkt } });
      const decision = verifierWith().decide(`DPoP ${accessToken}`, requirement, request(await proofFor(accessToken, {}, by)));
      expect(decision, alg).toMatchObject({ status: 200, claims: { sub: 'acc', cnf: { jkt: by.jkt } } });
    }
  });

  it('takes the scheme in any case, the proof as the one element of an array, and the URL as the client wrote it (normalised, query ignored)', async () => {
    const accessToken = bound();
    const verifier = verifierWith();
    expect(verifier.decide(`dpop ${accessToken}`, requirement, request(await proofFor(accessToken)))).toMatchObject({ status: 200 });
    expect(verifier.decide(`DPOP  ${accessToken} `, requirement, request([await proofFor(accessToken)]))).toMatchObject({ status: 200 });
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(await proofFor(accessToken), { url: 'HTTPS://API.example.com:443/orders?page=2' }))).toMatchObject({ status: 200 });
  });

  it('refuses a DPoP-bound token presented as a bearer token, even with a good proof beside it: it must not work without its key', async () => {
    const accessToken = bound();
    const verifier = verifierWith();
    expect(verifier.decide(`Bearer ${accessToken}`, requirement)).toMatchObject({ status: 401, code: 'ERR_TOKEN_DPOP_BOUND' });
    expect(verifier.decide(`Bearer ${accessToken}`, requirement, request(await proofFor(accessToken)))).toMatchObject({ status: 401, code: 'ERR_TOKEN_DPOP_BOUND' });
    // Twice: the second answer comes from the verified-token cache, which must not skip the binding.
    const decision = verifier.decide(`Bearer ${accessToken}`, requirement);
    expect(decision).toMatchObject({ status: 401, code: 'ERR_TOKEN_DPOP_BOUND' });
    expect(decision).not.toHaveProperty('scheme');
    // An unbound token is still a bearer token, as before.
    expect(verifier.decide(`Bearer ${token()}`, requirement)).toEqual({ status: 200, claims: expect.objectContaining({ sub: 'acc' }) });
  });

  it('refuses the DPoP scheme with a token bound to no key, however good the proof', async () => {
    const accessToken = token();
    expect(verifierWith().decide(`DPoP ${accessToken}`, requirement, request(await proofFor(accessToken)))).toMatchObject({ status: 401, code: 'ERR_TOKEN_NOT_DPOP_BOUND', scheme: 'DPoP' });
  });

  it('refuses a missing proof, several proofs, and a request whose method and URL are not known', async () => {
    const accessToken = bound();
    const verifier = verifierWith();
    const refusal = { status: 401, code: 'ERR_DPOP_PROOF_INVALID', scheme: 'DPoP' };
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(undefined))).toMatchObject({ ...refusal, detail: expect.stringContaining('exactly one') });
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(''))).toMatchObject(refusal);
    const [first, second] = [await proofFor(accessToken), await proofFor(accessToken)];
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request([first, second]))).toMatchObject({ ...refusal, detail: expect.stringContaining('exactly one') });
    // Node joins a repeated DPoP header with ", ".
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(`${first}, ${second}`))).toMatchObject({ ...refusal, detail: expect.stringContaining('exactly one') });
    expect(verifier.decide(`DPoP ${accessToken}`, requirement)).toMatchObject({ ...refusal, detail: expect.stringContaining('not known') });
    // None of those spent the proof.
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(first))).toMatchObject({ status: 200 });
  });

  it('refuses a proof for another method or URL, outside its window, without the token\'s ath, or not a DPoP proof at all', async () => {
    const accessToken = bound();
    const verifier = verifierWith();
    const refused = async (claims: Record<string, unknown>, overrides: Partial<PresentedRequest> = {}) =>
      verifier.decide(`DPoP ${accessToken}`, requirement, request(await proofFor(accessToken, claims), overrides));
    expect(await refused({ htm: 'GET' })).toMatchObject({ status: 401, code: 'ERR_DPOP_PROOF_INVALID', detail: expect.stringContaining('htm') });
    expect(await refused({}, { url: 'https://api.example.com/other' })).toMatchObject({ code: 'ERR_DPOP_PROOF_INVALID', detail: expect.stringContaining('htu') });
    expect(await refused({}, { url: 'http://api.example.com/orders' })).toMatchObject({ code: 'ERR_DPOP_PROOF_INVALID', detail: expect.stringContaining('htu') });
    expect(await refused({ iat: now - 71 })).toMatchObject({ code: 'ERR_DPOP_PROOF_INVALID', detail: expect.stringContaining('iat') });
    expect(await refused({ ath: accessTokenHash(token()) })).toMatchObject({ code: 'ERR_DPOP_PROOF_INVALID', detail: expect.stringContaining('ath') });
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(await holder.proof()))).toMatchObject({ code: 'ERR_DPOP_PROOF_INVALID', detail: expect.stringContaining('ath') });
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(accessToken))).toMatchObject({ code: 'ERR_DPOP_PROOF_INVALID', detail: expect.stringContaining('typ') });
  });

  it('refuses a proof signed by another key than the one the token is bound to', async () => {
    const accessToken = bound();
    expect(verifierWith().decide(`DPoP ${accessToken}`, requirement, request(await proofFor(accessToken, {}, other)))).toMatchObject({
      status: 401,
      code: 'ERR_DPOP_PROOF_INVALID',
      detail: expect.stringContaining('bound to'),
    });
  });

  it('refuses a replayed proof at the same verifier; another verifier instance (a replica) has its own cache', async () => {
    const accessToken = bound();
    const proof = await proofFor(accessToken);
    const verifier = verifierWith();
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(proof))).toMatchObject({ status: 200 });
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(proof))).toMatchObject({ status: 401, code: 'ERR_DPOP_PROOF_INVALID', detail: expect.stringContaining('used before') });
    expect(verifierWith().decide(`DPoP ${accessToken}`, requirement, request(proof))).toMatchObject({ status: 200 });
  });

  it('checks the token first: a bad, expired or revoked token is invalid_token under the DPoP scheme, and its proof stays unspent', async () => {
    const projection = new RevocationProjection();
    projection.apply({ type: 'AccountTokensRevoked', v: 1, accountId: 'gone', notBefore: now, rejectsUntil: now + 3600, reason: 'operator', at: now - 1 });
    const verifier = verifierWith(projection);
    const expired = bound({ exp: now - 1 });
    const expiredProof = await proofFor(expired);
    expect(verifier.decide(`DPoP ${expired}`, requirement, request(expiredProof))).toMatchObject({ status: 401, code: 'ERR_TOKEN_EXPIRED', scheme: 'DPoP' });
    const revoked = bound({ sub: 'gone' });
    expect(verifier.decide(`DPoP ${revoked}`, requirement, request(await proofFor(revoked)))).toMatchObject({ status: 401, code: 'ERR_TOKEN_REVOKED', scheme: 'DPoP' });
    expect(verifier.decide(`DPoP ${bound()}x`, requirement, request(await proofFor(bound())))).toMatchObject({ status: 401, code: 'ERR_TOKEN_SIGNATURE', scheme: 'DPoP' });
    expect(verifier.decide('DPoP  ', requirement, request(await proofFor(bound())))).toMatchObject({ status: 401, code: 'ERR_TOKEN_MALFORMED', scheme: 'DPoP' });
    // The proof refused with its expired token was not spent: the token was refused before it.
    const fresh = verifierWith(projection);
    expect(fresh.decide(`DPoP ${expired}`, requirement, request(expiredProof))).toMatchObject({ code: 'ERR_TOKEN_EXPIRED' });
  });

  it('checks the proof before the permission: a bound token without the permission is 403 with its proof, 401 without one', async () => {
    const accessToken = bound({ scope: 'orders:read' });
    const verifier = verifierWith();
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(undefined))).toMatchObject({ status: 401, code: 'ERR_DPOP_PROOF_INVALID' });
    expect(verifier.decide(`DPoP ${accessToken}`, requirement, request(await proofFor(accessToken)))).toMatchObject({ status: 403, scope: 'orders:write', scheme: 'DPoP' });
  });

  it('check() refreshes the keys for an unknown kid and then checks the proof once', async () => {
    const lateKeys = new PublicKeySet();
    let refreshes = 0;
    const verifier = createBearerVerifier({
      keys: lateKeys,
      projection: new RevocationProjection(),
      issuer,
      now: () => now,
      refreshKeys: async () => {
        refreshes += 1;
        lateKeys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now - 100 });
      },
    });
    const accessToken = bound();
    const decision: AccessDecision = await verifier.check(`DPoP ${accessToken}`, requirement, request(await proofFor(accessToken)));
    expect(decision).toMatchObject({ status: 200 });
    expect(refreshes).toBe(1);
  });
});

describe('tesseraAuth with DPoP', () => {
  const algs = 'algs="ES256 RS256 PS256 EdDSA"';
  const verifier = verifierWith();
  const app = Fastify();
  const behindProxy = Fastify();

  beforeAll(async () => {
    installErrorHandlers(app);
    await app.register(tesseraAuth, { verifier });
    app.post('/orders', { config: { tessera: requirement } }, async (request) => ({ by: request.tesseraClaims?.sub }));
    installErrorHandlers(behindProxy);
    await behindProxy.register(tesseraAuth, { verifier: verifierWith(), publicOrigin: 'https://api.example.com' });
    behindProxy.post('/orders', { config: { tessera: requirement } }, async (request) => ({ by: request.tesseraClaims?.sub }));
  });

  /** inject() speaks plain HTTP to the host it is given: the URL the client addressed is http://<host>/orders. */
  const post = (target: typeof app, headers: Record<string, string | string[]>, path = '/orders') => target.inject({ method: 'POST', url: path, headers: { host: 'api.example.com', ...headers } });
  const proofAt = (accessToken: string, htu: string, claims: Record<string, unknown> = {}) => proofFor(accessToken, { htu, ...claims });

  it('lets a DPoP-bound token through with a proof for the request\'s own protocol, host and path, and refuses its replay', async () => {
    const accessToken = bound();
    const proof = await proofAt(accessToken, 'http://api.example.com/orders');
    const answer = await post(app, { authorization: `DPoP ${accessToken}`, dpop: proof }, '/orders?page=1');
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ by: 'acc' });
    const replay = await post(app, { authorization: `DPoP ${accessToken}`, dpop: proof });
    expect(replay.statusCode).toBe(401);
    expect(replay.headers['www-authenticate']).toBe(`DPoP error="invalid_dpop_proof", error_description="the DPoP proof was used before (its jti is single use)", ${algs}`);
    expect(replay.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('with publicOrigin, checks the proof against that origin and the request\'s path, not the request\'s own host', async () => {
    const accessToken = bound();
    const atOrigin = await post(behindProxy, { authorization: `DPoP ${accessToken}`, dpop: await proofAt(accessToken, 'https://api.example.com/orders'), host: 'backend:8080' });
    expect(atOrigin.statusCode).toBe(200);
    const atHost = await post(behindProxy, { authorization: `DPoP ${accessToken}`, dpop: await proofAt(accessToken, 'http://backend:8080/orders'), host: 'backend:8080' });
    expect(atHost.statusCode).toBe(401);
    expect(atHost.headers['www-authenticate']).toMatch(/^DPoP error="invalid_dpop_proof", error_description="[^"]*htu/);
  });

  it('refuses a publicOrigin that is not an origin when the plugin is registered', async () => {
    for (const publicOrigin of ['api.example.com', 'https://api.example.com/base', 'https://api.example.com/?x=1', 'ftp://api.example.com']) {
      const refused = Fastify();
      await expect(refused.register(tesseraAuth, { verifier, publicOrigin }).ready(), publicOrigin).rejects.toThrow(/publicOrigin/);
    }
  });

  it('challenges with RFC 9449 section 7.1\'s DPoP challenge for each DPoP refusal, invalid_token for the token\'s own faults', async () => {
    const accessToken = bound();
    const noProof = await post(app, { authorization: `DPoP ${accessToken}` });
    expect(noProof.statusCode).toBe(401);
    expect(noProof.headers['www-authenticate']).toBe(`DPoP error="invalid_dpop_proof", error_description="a DPoP request needs exactly one DPoP header with one proof", ${algs}`);
    const wrongKey = await post(app, { authorization: `DPoP ${accessToken}`, dpop: await proofFor(accessToken, { htu: 'http://api.example.com/orders' }, other) });
    expect(wrongKey.headers['www-authenticate']).toBe(`DPoP error="invalid_dpop_proof", error_description="the DPoP proof is not signed by the key the access token is bound to", ${algs}`);
    const unbound = token();
    const notBound = await post(app, { authorization: `DPoP ${unbound}`, dpop: await proofAt(unbound, 'http://api.example.com/orders') });
    expect(notBound.statusCode).toBe(401);
    expect(notBound.headers['www-authenticate']).toBe(`DPoP error="invalid_token", error_description="the access token is not bound to a DPoP key: present it with the Bearer scheme", ${algs}`);
    const expired = bound({ exp: now - 1 });
    const expiredAnswer = await post(app, { authorization: `DPoP ${expired}`, dpop: await proofAt(expired, 'http://api.example.com/orders') });
    expect(expiredAnswer.headers['www-authenticate']).toBe(`DPoP error="invalid_token", error_description="the access token has expired", ${algs}`);
    const lacking = bound({ scope: 'orders:read' });
    const forbidden = await post(app, { authorization: `DPoP ${lacking}`, dpop: await proofAt(lacking, 'http://api.example.com/orders') });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.headers['www-authenticate']).toBe(`DPoP error="insufficient_scope", scope="orders:write", ${algs}`);
  });

  it('refuses a DPoP-bound token sent as a bearer token with Bearer invalid_token and a DPoP challenge; bearer tokens keep their challenges', async () => {
    const asBearer = await post(app, { authorization: `Bearer ${bound()}` });
    expect(asBearer.statusCode).toBe(401);
    expect(asBearer.headers['www-authenticate']).toBe(`Bearer error="invalid_token", DPoP ${algs}`);
    expect((await post(app, { authorization: `Bearer ${token()}x` })).headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect((await post(app, { authorization: `Bearer ${token({ scope: '' })}` })).headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="orders:write"');
    expect((await post(app, { authorization: `Bearer ${token()}` })).statusCode).toBe(200);
  });

  it('names both schemes to a request without credentials', async () => {
    const missing = await post(app, {});
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toBe(`Bearer, DPoP ${algs}`);
  });
});
