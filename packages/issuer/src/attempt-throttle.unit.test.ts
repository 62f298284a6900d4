import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createMetrics, createReadiness } from '@tessera/host';
import { loadConfig } from '@tessera/config';
import { buildApp, transportSettings } from '@tessera/server';
import { PublicKeySet } from '@tessera/tokens';
import type { BudgetScope } from './attempt-limiter.js';
import type { FailureLimits, ThrottledOperation } from './attempt-throttle.js';
import { createInMemoryAttemptLimiter } from './in-memory-attempt-limiter.js';
import { issuerRoutes } from './wire-issuer.js';
import { IssuerRefusal } from './issuer-errors.js';
import type { InterfaceTokenOperations } from './token-service.js';
import { systemClock } from '@tessera/timing';

/**
 * Failed token operations are throttled per (credential, address) and per address, over inject() with the source address set per request. The token service is a stand-in
 * that knows one right key per credential and one good refresh token.
 */
const pair = { issuedAt: 1, accessToken: 'at', refreshToken: 'rt', expiresAt: 2, scope: [] };
const tokens: InterfaceTokenOperations = {
  getToken: async (_id, key) => {
    if (key !== 'right') throw new IssuerRefusal('ERR_INVALID_CLIENT', 'invalid API Login ID or Transaction Key');
    return pair;
  },
  refreshToken: async (token) => {
    if (token !== 'good') throw new IssuerRefusal('ERR_REFRESH_TOKEN_INVALID', 'invalid refresh token');
    return pair;
  },
  revokeToken: async (token) => {
    if (token !== 'good') throw new IssuerRefusal('ERR_REFRESH_TOKEN_INVALID', 'invalid refresh token');
    return { revokedAt: 1 };
  },
  legacyAuthenticate: async (_id, key) => {
    if (key !== 'right') throw new IssuerRefusal('ERR_INVALID_CLIENT', 'invalid API ID or API Key');
    return { authenticationToken: 'lt', expiresInSeconds: 1800 };
  },
};

let app: FastifyInstance | undefined;
let throttled: [ThrottledOperation, BudgetScope][];
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(limits: FailureLimits = { credential: 3, address: 10, refresh: 4, proxy: 0 }, trustedProxies?: string) {
  throttled = [];
  const throttle = {
    limiter: createInMemoryAttemptLimiter({ windowSeconds: 300, clock: systemClock }),
    limits,
    onThrottled: (operation: ThrottledOperation, scope: BudgetScope) => void throttled.push([operation, scope]),
  };
  // The listeners' transport settings, as the process makes them: TESSERA_TRUSTED_PROXIES among them.
  const transport = trustedProxies === undefined ? {} : { transport: transportSettings(loadConfig({ TESSERA_TRUSTED_PROXIES: trustedProxies })) };
  app = await buildApp({ logLevel: 'silent', readiness: createReadiness(), metrics: createMetrics(), ...transport, routes: [issuerRoutes({ tokens, keys: new PublicKeySet(), now: () => Math.floor(systemClock.now() / 1000) }, throttle)] });
  return app;
}

const getToken = (from: string, id: string, key: string) =>
  app!.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', remoteAddress: from, payload: { api_login_id: id, transaction_key: key } });
const refresh = (from: string, token: string, operation: 'refresh' | 'revoke' = 'refresh') =>
  app!.inject({ method: 'POST', url: `/v5/Authorization/${operation}-oauth-token`, remoteAddress: from, payload: { refresh_token: token } });
const statuses = async (answers: Promise<{ statusCode: number }>[]) => (await Promise.all(answers)).map((answer) => answer.statusCode);
const sequence = async (count: number, attempt: () => Promise<{ statusCode: number }>) => {
  const seen: number[] = [];
  for (let i = 0; i < count; i += 1) seen.push((await attempt()).statusCode);
  return seen;
};

describe('throttling failed get-oauth-token attempts', () => {
  it('an attacker hammering one API Login ID from one address gets 429 once its budget is spent, even with the right key', async () => {
    await start();
    expect(await sequence(6, () => getToken('127.0.0.1', 'tsl_a', 'wrong'))).toEqual([401, 401, 401, 429, 429, 429]);
    const right = await getToken('127.0.0.1', 'tsl_a', 'right');
    expect(right.statusCode).toBe(429);
    expect(right.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(right.headers['retry-after'])).toBe(100);
    expect(right.headers['www-authenticate']).toBeUndefined();
    expect(right.json()).toMatchObject({ type: 'urn:tessera:problem:too-many-requests', title: 'Too Many Requests', status: 429 });
    expect(throttled).toEqual(Array.from({ length: 4 }, () => ['issue', 'credential']));
  });

  it('the rightful client of that same API Login ID on another address keeps getting 200, its successes never counted', async () => {
    await start();
    await sequence(6, () => getToken('127.0.0.1', 'tsl_a', 'wrong'));
    expect(await sequence(20, () => getToken('127.0.0.2', 'tsl_a', 'right'))).toEqual(Array.from({ length: 20 }, () => 200));
  });

  it('a success forgives the credential-and-address budget: a client that mistyped twice starts afresh', async () => {
    await start();
    expect(await sequence(2, () => getToken('127.0.0.1', 'tsl_a', 'wrong'))).toEqual([401, 401]);
    expect((await getToken('127.0.0.1', 'tsl_a', 'right')).statusCode).toBe(200);
    expect(await sequence(3, () => getToken('127.0.0.1', 'tsl_a', 'wrong'))).toEqual([401, 401, 401]);
  });

  it('an address trying many API Login IDs is throttled per address, and a success does not buy it more guesses', async () => {
    await start();
    const guesses = await sequence(12, async () => {
      const answer = await getToken('127.0.0.1', `tsl_${Math.random()}`, 'wrong');
      // A valid account of the attacker's own between guesses.
      await getToken('127.0.0.1', 'tsl_own', 'right');
      return answer;
    });
    expect(guesses).toEqual([...Array.from({ length: 10 }, () => 401), 429, 429]);
    expect(throttled.at(-1)).toEqual(['issue', 'address']);
    expect((await getToken('127.0.0.1', 'tsl_own', 'right')).statusCode).toBe(429);
    expect((await getToken('127.0.0.3', 'tsl_other', 'wrong')).statusCode).toBe(401);
  });

  it('a malformed request (400) spends nothing', async () => {
    await start();
    const malformed = () => app!.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', remoteAddress: '127.0.0.1', payload: { api_login_id: 'tsl_a' } });
    expect(await sequence(5, malformed)).toEqual([400, 400, 400, 400, 400]);
    expect((await getToken('127.0.0.1', 'tsl_a', 'wrong')).statusCode).toBe(401);
  });

  it('limits of 0 turn throttling off', async () => {
    await start({ credential: 0, address: 0, refresh: 0, proxy: 0 });
    expect(await sequence(20, () => getToken('127.0.0.1', 'tsl_a', 'wrong'))).toEqual(Array.from({ length: 20 }, () => 401));
  });
});

describe('the aggregate budget of a trusted proxy', () => {
  const limits = { credential: 3, address: 10, refresh: 4, proxy: 5 };
  let clients = 0;
  /** A client address not seen before: no client's own budget is ever spent. */
  const anotherClient = () => `198.51.100.${(clients += 1)}`;
  const viaProxy = (proxy: string, client: string, key: string, url = '/v5/Authorization/get-oauth-token') =>
    app!.inject({ method: 'POST', url, remoteAddress: proxy, headers: { 'x-forwarded-for': client }, payload: url.includes('refresh') ? { refresh_token: key } : { api_login_id: 'tsl_a', transaction_key: key } });

  it('clients named in X-Forwarded-For by one hop spend its budget together, logins and refreshes alike; another hop keeps its own', async () => {
    await start(limits, '10.0.0.0/8');
    const routes = ['/v5/Authorization/get-oauth-token', '/v5/Authorization/refresh-oauth-token'];
    const failures = await sequence(5, async () => viaProxy('10.0.0.1', anotherClient(), 'wrong', routes[clients % 2]));
    expect(failures).toEqual([401, 401, 401, 401, 401]);
    const spent = await viaProxy('10.0.0.1', '198.51.100.251', 'right');
    expect(spent.statusCode).toBe(429);
    expect(spent.json()).toMatchObject({ detail: expect.stringMatching(/through this proxy/) });
    expect(throttled).toEqual([['issue', 'proxy']]);
    expect((await viaProxy('10.0.0.2', '198.51.100.251', 'right')).statusCode).toBe(200);
  });

  it('is not charged for a client that reaches Tessera directly, nor by a peer the header does not apply to', async () => {
    await start({ ...limits, address: 100 }, '10.0.0.0/8');
    expect(await sequence(8, () => getToken('10.0.0.1', `tsl_${anotherClient()}`, 'wrong'))).toEqual(Array.from({ length: 8 }, () => 401));
    expect(await sequence(8, () => viaProxy('192.0.2.1', anotherClient(), 'wrong'))).toEqual([401, 401, 401, 429, 429, 429, 429, 429]);
    expect(throttled.every(([, scope]) => scope === 'credential')).toBe(true);
  });

  it('0 turns it off: a hop then forwards as many failing clients as it likes', async () => {
    await start({ ...limits, proxy: 0 }, '10.0.0.0/8');
    expect(await sequence(12, () => viaProxy('10.0.0.1', anotherClient(), 'wrong'))).toEqual(Array.from({ length: 12 }, () => 401));
  });
});

describe('throttling failed /v1/authenticate attempts', () => {
  it('per API ID and address, on the same terms as get-oauth-token', async () => {
    await start();
    const authenticate = (from: string, key: string) =>
      app!.inject({ method: 'POST', url: '/v1/authenticate', remoteAddress: from, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `apiid=tla_a&apikey=${key}` });
    expect(await sequence(4, () => authenticate('127.0.0.1', 'wrong'))).toEqual([401, 401, 401, 429]);
    expect((await authenticate('127.0.0.1', 'right')).statusCode).toBe(429);
    expect((await authenticate('127.0.0.2', 'right')).statusCode).toBe(200);
    expect(throttled.at(-1)).toEqual(['legacy_issue', 'credential']);
  });
});

describe('throttling failed refresh and revoke attempts', () => {
  it('per address, refresh and revoke together; other addresses and good tokens elsewhere are untouched', async () => {
    await start();
    expect(await statuses([refresh('127.0.0.1', 'bad'), refresh('127.0.0.1', 'bad', 'revoke')])).toEqual([401, 401]);
    expect(await sequence(3, () => refresh('127.0.0.1', 'bad'))).toEqual([401, 401, 429]);
    expect((await refresh('127.0.0.1', 'good', 'revoke')).statusCode).toBe(429);
    expect(throttled).toEqual([
      ['refresh', 'address'],
      ['revoke', 'address'],
    ]);
    expect(await sequence(10, () => refresh('127.0.0.2', 'good'))).toEqual(Array.from({ length: 10 }, () => 200));
  });
});
