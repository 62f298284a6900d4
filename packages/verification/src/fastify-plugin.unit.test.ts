import Fastify from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandlers, type RequestStep } from '@tessera/http';
import { PublicKeySet, generateSigningKey, signAccessToken, signingKeyFromJwk, type SigningKey } from '@tessera/tokens';
import type { AccessTokenClaims } from '@tessera/contracts';
import { createBearerVerifier } from './bearer-verifier.js';
import { tesseraAuth } from './fastify-plugin.js';
import { RevocationProjection } from './revocation-projection.js';

/** A downstream fastify service protecting its own routes with the plugin. */
const now = 1_800_000_000;
const issuer = 'urn:tessera:issuer';
let key: SigningKey;
const keys = new PublicKeySet();
const projection = new RevocationProjection();
const verifier = createBearerVerifier({ keys, projection, issuer, now: () => now });
const app = Fastify();

const token = (overrides: Partial<AccessTokenClaims> = {}) =>
  signAccessToken(
    { iss: issuer, sub: 'acc', aud: 'tessera:v5', client_id: 'login', iat: now, exp: now + 3600, jti: 'j', scope: 'orders:write', fid: 'fam', gen: 0, ...overrides },
    key,
  );

beforeAll(async () => {
  const generated = await generateSigningKey();
  key = signingKeyFromJwk(generated.kid, generated.privateJwk);
  keys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now });
  installErrorHandlers(app);
  await app.register(tesseraAuth, { verifier });
  app.post('/orders', { config: { tessera: { interface: 'v5', permission: 'orders:write' } } }, async (request) => ({ by: request.tesseraClaims?.sub }));
  app.get('/legacy', { config: { tessera: { interface: 'v1' } } }, async () => ({ ok: true }));
  app.get('/open', async () => ({ open: true }));
});

const call = (method: 'GET' | 'POST', url: string, bearer?: string) =>
  app.inject({ method, url, headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });

describe('tesseraAuth fastify plugin', () => {
  it('lets a valid token with the permission through and exposes its claims', async () => {
    const answer = await call('POST', '/orders', token());
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ by: 'acc' });
  });

  it('401 with a bare Bearer challenge (RFC 6750 3.1: no error code) and a DPoP one (RFC 9449 7.1: the algorithms) when the request carries no credentials', async () => {
    const missing = await call('POST', '/orders');
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer, DPoP algs="ES256 RS256 PS256 EdDSA"');
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    const otherScheme = await app.inject({ method: 'POST', url: '/orders', headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
    expect(otherScheme.statusCode).toBe(401);
    expect(otherScheme.headers['www-authenticate']).toBe('Bearer, DPoP algs="ES256 RS256 PS256 EdDSA"');
  });

  it('401 with Bearer error="invalid_token" for a bad, malformed or expired token', async () => {
    for (const bad of [`${token()}x`, 'not-a-jwt', token({ exp: now - 1 })]) {
      const answer = await call('POST', '/orders', bad);
      expect(answer.statusCode).toBe(401);
      expect(answer.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    }
    const noToken = await app.inject({ method: 'POST', url: '/orders', headers: { authorization: 'Bearer' } });
    expect(noToken.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('403 for a valid token without the permission, challenging with insufficient_scope and the scope needed', async () => {
    const answer = await call('POST', '/orders', token({ scope: 'orders:read' }));
    expect(answer.statusCode).toBe(403);
    expect(answer.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="orders:write"');
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('401 once the family is rotated past the token or revoked', async () => {
    const base = { accountId: 'acc', accessExpiresAt: now + 3600 };
    projection.apply({ type: 'TokenRotated', v: 1, familyId: 'rotated', credentialId: 'c', apiLoginId: 'l', generation: 1, refreshTokenHash: 'A'.repeat(43), jti: 'x', scope: [], issuedAt: now, refreshExpiresAt: now + 9, ...base });
    expect((await call('POST', '/orders', token({ fid: 'rotated', gen: 0 }))).statusCode).toBe(401);
    expect((await call('POST', '/orders', token({ fid: 'rotated', gen: 1 }))).statusCode).toBe(200);
    projection.apply({ type: 'TokenRevoked', v: 1, familyId: 'rotated', generation: 1, revokedAt: now, ...base });
    expect((await call('POST', '/orders', token({ fid: 'rotated', gen: 1 }))).statusCode).toBe(401);
  });

  it('keeps interfaces apart: a v5 token on a v1 route is 401', async () => {
    expect((await call('GET', '/legacy', token())).statusCode).toBe(401);
    expect((await call('GET', '/legacy', token({ aud: 'tessera:v1', fid: undefined, gen: undefined }))).statusCode).toBe(200);
  });

  it('leaves unmarked routes alone', async () => {
    expect((await call('GET', '/open')).statusCode).toBe(200);
  });
});

describe('tesseraAuth with a key the verifier does not know yet', () => {
  /** A second app whose verifier learns a new signing key only by refreshing (the JWKS, in a real service). */
  async function appWithRefresh(refreshKeys: () => Promise<void>) {
    const lateKeys = new PublicKeySet();
    const lateApp = Fastify();
    installErrorHandlers(lateApp);
    await lateApp.register(tesseraAuth, { verifier: createBearerVerifier({ keys: lateKeys, projection, issuer, now: () => now, refreshKeys }) });
    lateApp.post('/orders', { config: { tessera: { interface: 'v5', permission: 'orders:write' } } }, async (request) => ({ by: request.tesseraClaims?.sub }));
    return { lateApp, lateKeys };
  }

  it('refreshes the keys once and lets the token through when the refresh brings its key', async () => {
    let refreshes = 0;
    const { lateApp, lateKeys } = await appWithRefresh(async () => {
      refreshes += 1;
      lateKeys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now });
    });
    const answer = await lateApp.inject({ method: 'POST', url: '/orders', headers: { authorization: `Bearer ${token()}` } });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ by: 'acc' });
    expect(refreshes).toBe(1);
  });

  it('answers 401 when the refresh does not bring the key, and a problem (not a crash) when the refresh fails', async () => {
    const { lateApp } = await appWithRefresh(async () => undefined);
    const unknown = await lateApp.inject({ method: 'POST', url: '/orders', headers: { authorization: `Bearer ${token()}` } });
    expect(unknown.statusCode).toBe(401);
    const { lateApp: failing } = await appWithRefresh(async () => {
      throw new Error('JWKS unreachable');
    });
    const failed = await failing.inject({ method: 'POST', url: '/orders', headers: { authorization: `Bearer ${token()}` } });
    expect(failed.statusCode).toBeGreaterThanOrEqual(500);
    expect(failed.headers['content-type']).toContain('application/problem+json');
  });
});

describe('tesseraAuth given a server\'s request steps', () => {
  it('adds its check to the steps and no hook of its own: the route is unprotected until the server runs the steps', async () => {
    const steps: RequestStep[] = [];
    const served = Fastify();
    await served.register(tesseraAuth, { verifier, steps });
    served.post('/orders', { config: { tessera: { interface: 'v5', permission: 'orders:write' } } }, async () => ({ reached: true }));
    expect(steps).toHaveLength(1);
    expect((await served.inject({ method: 'POST', url: '/orders' })).json()).toEqual({ reached: true });
    await served.close();
  });
});
