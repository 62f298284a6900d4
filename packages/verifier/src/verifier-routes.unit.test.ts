import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessTokenClaims } from '@tessera/contracts';
import { createMetrics, createReadiness } from '@tessera/host';
import { buildApp } from '@tessera/server';
import { generateSigningKey, signAccessToken, signingKeyFromJwk, type SigningKey } from '@tessera/tokens';
import { createBearerVerifier } from '@tessera/verification';
import { verifierRouteRegistrar } from './wire-verifier.js';
import { createVerifierState } from './verifier-state.js';

/**
 * The verifier's routes on the server as a role runs them: the bearer check is one of the
 * server's request steps (its one onRequest hook), including the wait for a key refresh.
 */
const now = 1_800_000_000;
const issuer = 'urn:tessera:issuer';
let key: SigningKey;
const apps: FastifyInstance[] = [];

const token = (overrides: Partial<AccessTokenClaims> = {}) =>
  signAccessToken({ iss: issuer, sub: 'acc_1', aud: 'tessera:v5', client_id: 'login', iat: now, exp: now + 3600, jti: 'j', scope: 'transaction:charge', fid: 'fam', gen: 0, ...overrides }, key);

/** An app whose verifier knows the key at once (`refresh` absent) or learns it only through `refresh`. */
async function serve(options: { knowsKey: boolean; refresh?: (learn: () => void) => Promise<void> }) {
  const state = createVerifierState({ clockSkewSeconds: 60 });
  const learn = () => state.keys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now });
  if (options.knowsKey) learn();
  let refreshes = 0;
  const bearer = createBearerVerifier({
    keys: state.keys,
    projection: state.projection,
    issuer,
    now: () => now,
    refreshKeys: async () => {
      refreshes += 1;
      await options.refresh?.(learn);
    },
  });
  const app = await buildApp({ logLevel: 'silent', readiness: createReadiness(), metrics: createMetrics(), routes: [verifierRouteRegistrar({ bearer, state })] });
  apps.push(app);
  const charge = (authorization?: string, body = '{}') =>
    app.inject({ method: 'POST', url: '/v5/Transaction/charge', headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) }, payload: body });
  return { charge, refreshes: () => refreshes };
}

beforeAll(async () => {
  const generated = await generateSigningKey();
  key = signingKeyFromJwk(generated.kid, generated.privateJwk);
});
afterAll(async () => {
  for (const app of apps) await app.close();
});

describe('the verifier routes on the server', () => {
  it('charge: 200 with the token\'s account, 403 insufficient_scope without the permission, 401 without a token', async () => {
    const { charge } = await serve({ knowsKey: true });
    const allowed = await charge(`Bearer ${token()}`);
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json()).toMatchObject({ accepted: true, account_id: 'acc_1' });
    const lacking = await charge(`Bearer ${token({ scope: 'transaction:charged reports:read transaction:charge:all' })}`);
    expect(lacking.statusCode).toBe(403);
    expect(lacking.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="transaction:charge"');
    const missing = await charge();
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('a token signed by a key the verifier learns only by refreshing: the request waits for one refresh, then 200', async () => {
    const { charge, refreshes } = await serve({ knowsKey: false, refresh: async (learn) => learn() });
    const answer = await charge(`Bearer ${token()}`);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ account_id: 'acc_1' });
    expect(refreshes()).toBe(1);
  });

  it('a refresh that does not bring the key answers 401; one that fails answers a problem (5xx), never a hang', async () => {
    const unknown = await serve({ knowsKey: false, refresh: async () => undefined });
    expect((await unknown.charge(`Bearer ${token()}`)).statusCode).toBe(401);
    const failing = await serve({
      knowsKey: false,
      refresh: async () => {
        throw new Error('keys unreachable');
      },
    });
    const failed = await failing.charge(`Bearer ${token()}`);
    expect(failed.statusCode).toBeGreaterThanOrEqual(500);
    expect(failed.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('charge takes any JSON object as its body, and refuses every other JSON value with a 400 problem', async () => {
    const { charge } = await serve({ knowsKey: true });
    for (const body of ['{}', '{"amount":12.5,"nested":{"a":[1,2]}}']) expect((await charge(`Bearer ${token()}`, body)).statusCode, body).toBe(200);
    for (const body of ['[]', '[{}]', 'null', '"{}"', '12', 'true']) {
      const refused = await charge(`Bearer ${token()}`, body);
      expect(refused.statusCode, body).toBe(400);
      expect(refused.headers['content-type'], body).toMatch(/^application\/problem\+json/);
      expect(refused.json().detail, body).toMatch(/^the request body is missing a required field/);
    }
  });
});
