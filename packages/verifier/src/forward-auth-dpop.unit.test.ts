import type { FastifyInstance } from 'fastify';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics, createReadiness } from '@tessera/host';
import { buildApp } from '@tessera/server';
import { accessTokenHash, generateSigningKey, signAccessToken, signingKeyFromJwk, type SigningKey } from '@tessera/tokens';
import { createBearerVerifier } from '@tessera/verification';
import { verifierRouteRegistrar } from './wire-verifier.js';
import { createVerifierState } from './verifier-state.js';

/**
 * DPoP (RFC 9449) on the verifier's routes as a role serves them: forward-auth reads the client's
 * method and URL from the proxy's headers (only from a trusted proxy when proxies are named), the
 * example routes from the request itself.
 */
const now = 1_800_000_000;
const issuer = 'urn:tessera:issuer';
const called = 'https://shop.example.com/v5/Transaction/charge';
let key: SigningKey;
let jkt: string;
let sign: (claims: Record<string, unknown>) => Promise<string>;
const apps: FastifyInstance[] = [];

const boundToken = () =>
  signAccessToken({ iss: issuer, sub: 'acc_1', aud: 'tessera:v5', client_id: 'login', iat: now, exp: now + 3600, jti: 'j', scope: 'transaction:charge', fid: 'fam', gen: 0, cnf: { jkt } }, key);
const proof = (token: string, htm = 'POST', htu = called) => sign({ jti: crypto.randomUUID(), htm, htu, iat: now, ath: accessTokenHash(token) });

async function serve(trustedProxies?: readonly string[]) {
  const state = createVerifierState({ clockSkewSeconds: 60 });
  state.keys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now });
  const bearer = createBearerVerifier({ keys: state.keys, projection: state.projection, issuer, now: () => now });
  const app = await buildApp({ logLevel: 'silent', readiness: createReadiness(), metrics: createMetrics(), routes: [verifierRouteRegistrar({ bearer, state }, { trustedProxies })] });
  apps.push(app);
  return app;
}

beforeAll(async () => {
  const generated = await generateSigningKey();
  key = signingKeyFromJwk(generated.kid, generated.privateJwk);
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  jkt = await calculateJwkThumbprint(jwk as JWK, 'sha256');
  sign = (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(privateKey);
});
afterAll(async () => {
  for (const app of apps) await app.close();
});

const forwardAuth = (app: FastifyInstance, headers: Record<string, string>, remoteAddress = '127.0.0.1') =>
  app.inject({ method: 'GET', url: '/forward-auth?permission=transaction:charge', headers, remoteAddress });

describe('forward-auth with a DPoP-bound token', () => {
  it('takes the client\'s method and URL from X-Original-Method and X-Original-URL (NGINX)', async () => {
    const app = await serve();
    const token = boundToken();
    const answer = await forwardAuth(app, { authorization: `DPoP ${token}`, dpop: await proof(token), 'x-original-method': 'POST', 'x-original-url': `${called}?order=7` });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['x-tessera-subject']).toBe('acc_1');
    // A URL is one value, whatever commas its query holds.
    const withCommas = await forwardAuth(app, { authorization: `DPoP ${token}`, dpop: await proof(token), 'x-original-method': 'POST', 'x-original-url': `${called}?ids=1,2,3` });
    expect(withCommas.statusCode).toBe(200);
  });

  it('answers a forwarded header longer than the document allows with a 400, whatever the token', async () => {
    const app = await serve();
    const token = boundToken();
    const longUrl = await forwardAuth(app, { authorization: `DPoP ${token}`, dpop: await proof(token), 'x-original-method': 'POST', 'x-original-url': `${called}?q=${'a'.repeat(2400)}` });
    expect(longUrl.statusCode).toBe(400);
    expect(longUrl.json()).toMatchObject({ status: 400 });
    const longMethod = await forwardAuth(app, { authorization: `Bearer ${token}`, 'x-forwarded-method': 'P'.repeat(33) });
    expect(longMethod.statusCode).toBe(400);
  });

  it('takes Traefik\'s X-Forwarded-Method, -Proto, -Host and -Uri, before X-Original-*, and the last of appended values', async () => {
    const app = await serve();
    const token = boundToken();
    const traefik = { 'x-forwarded-method': 'POST', 'x-forwarded-proto': 'http, https', 'x-forwarded-host': 'shop.example.com', 'x-forwarded-uri': '/v5/Transaction/charge' };
    const answer = await forwardAuth(app, { authorization: `DPoP ${token}`, dpop: await proof(token), ...traefik, 'x-original-method': 'GET', 'x-original-url': 'https://elsewhere.example/' });
    expect(answer.statusCode).toBe(200);
    const withCommas = await forwardAuth(app, { authorization: `DPoP ${token}`, dpop: await proof(token), ...traefik, 'x-forwarded-uri': '/v5/Transaction/charge?ids=1,2' });
    expect(withCommas.statusCode).toBe(200);
    const wrongPath = await forwardAuth(app, { authorization: `DPoP ${token}`, dpop: await proof(token), ...traefik, 'x-forwarded-uri': '/v5/other' });
    expect(wrongPath.statusCode).toBe(401);
    expect(wrongPath.headers['www-authenticate']).toMatch(/^DPoP error="invalid_dpop_proof", error_description="the DPoP proof's htu/);
  });

  it('refuses a DPoP request whose method or URL the proxy did not pass, or passed unusable: never checked against forward-auth\'s own', async () => {
    const app = await serve();
    const token = boundToken();
    const cases: Record<string, string>[] = [
      {},
      { 'x-original-url': called },
      { 'x-original-method': 'POST' },
      { 'x-original-method': 'PO ST', 'x-original-url': called },
      { 'x-original-method': 'POST', 'x-original-url': '/v5/Transaction/charge' },
      { 'x-forwarded-method': 'POST', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example.com', 'x-forwarded-uri': 'no-slash' },
    ];
    for (const headers of cases) {
      const answer = await forwardAuth(app, { authorization: `DPoP ${token}`, dpop: await proof(token), ...headers });
      expect(answer.statusCode, JSON.stringify(headers)).toBe(401);
      expect(answer.headers['www-authenticate']).toMatch(/^DPoP error="invalid_dpop_proof", error_description="the request's method and URL are not known here/);
    }
  });

  it('with trusted proxies named, believes the method and URL from those peers only', async () => {
    const app = await serve(['10.0.0.1']);
    const token = boundToken();
    const original = { 'x-original-method': 'POST', 'x-original-url': called };
    expect((await forwardAuth(app, { authorization: `DPoP ${token}`, dpop: await proof(token), ...original }, '10.0.0.1')).statusCode).toBe(200);
    const direct = await forwardAuth(app, { authorization: `DPoP ${token}`, dpop: await proof(token), ...original }, '10.0.0.2');
    expect(direct.statusCode).toBe(401);
    expect(direct.headers['www-authenticate']).toMatch(/not known here/);
  });

  it('refuses the bound token as a bearer token, with a DPoP challenge beside the bearer one', async () => {
    const app = await serve();
    const answer = await forwardAuth(app, { authorization: `Bearer ${boundToken()}`, 'x-original-method': 'POST', 'x-original-url': called });
    expect(answer.statusCode).toBe(401);
    expect(answer.headers['www-authenticate']).toBe('Bearer error="invalid_token", DPoP algs="ES256 RS256 PS256 EdDSA"');
  });
});

describe('the example routes with a DPoP-bound token', () => {
  it('check the proof against the URL the route was called at, once', async () => {
    const app = await serve();
    const token = boundToken();
    const charge = (dpop: string) =>
      app.inject({ method: 'POST', url: '/v5/Transaction/charge', headers: { host: 'verifier.example:8443', 'content-type': 'application/json', authorization: `DPoP ${token}`, dpop }, payload: '{}' });
    const dpop = await proof(token, 'POST', 'http://verifier.example:8443/v5/Transaction/charge');
    const answer = await charge(dpop);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ accepted: true, account_id: 'acc_1' });
    expect((await charge(dpop)).statusCode).toBe(401);
    expect((await charge(await proof(token))).statusCode).toBe(401);
  });
});
