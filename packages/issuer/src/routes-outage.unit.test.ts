import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { EventStoreUnavailable } from '@tessera/event-store';
import { createMetrics, createReadiness } from '@tessera/host';
import { buildApp, type RouteRegistrar } from '@tessera/server';
import { SigningKeyUnavailable } from './issuer-errors.js';
import { v1AuthenticateRoutes } from './routes-v1.js';
import { v5TokenRoutes } from './routes-v5.js';
import type { InterfaceTokenOperations } from './token-service.js';

/** Token operations that meet an outage: no signing key (retired elsewhere), or a store that cannot append. */
const failingWith = (error: () => Error): InterfaceTokenOperations => {
  const fail = async (): Promise<never> => {
    throw error();
  };
  return { getToken: fail, refreshToken: fail, revokeToken: fail, legacyAuthenticate: fail };
};

const apps = new Map<string, FastifyInstance>();
beforeAll(async () => {
  for (const [name, tokens] of [
    ['no signing key', failingWith(() => new SigningKeyUnavailable())],
    ['event store down', failingWith(() => new EventStoreUnavailable('append failed: SQLITE_FULL: database or disk is full'))],
  ] as const) {
        const routes: RouteRegistrar = async (app) => {
      await app.register(v5TokenRoutes, { tokens });
      await app.register(v1AuthenticateRoutes, { tokens });
    };
    apps.set(name, await buildApp({ logLevel: 'silent', readiness: createReadiness(), metrics: createMetrics(), routes: [routes] }));
  }
});
afterAll(async () => {
  for (const app of apps.values()) await app.close();
});

describe('a token request during an outage', () => {
  it.each(
    ['no signing key', 'event store down'].flatMap((outage) =>
      [
        ['/v5/Authorization/get-oauth-token', 'application/json', JSON.stringify({ api_login_id: 'a', transaction_key: 'b' })],
        ['/v5/Authorization/refresh-oauth-token', 'application/json', JSON.stringify({ refresh_token: 'r' })],
        ['/v5/Authorization/revoke-oauth-token', 'application/json', JSON.stringify({ refresh_token: 'r' })],
        ['/v1/authenticate', 'application/x-www-form-urlencoded', 'apiid=a&apikey=b'],
      ].map(([url, contentType, payload]) => [outage, url!, contentType!, payload!] as const),
    ),
  )('%s: %s answers 503 problem+json with Retry-After, not 500, and no driver detail', async (outage, url, contentType, payload) => {
    const answer = await apps.get(outage)!.inject({ method: 'POST', url, headers: { 'content-type': contentType }, payload });
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    expect(answer.json()).toMatchObject({ type: 'urn:tessera:problem:unavailable', status: 503 });
    expect(answer.body).not.toMatch(/SQLITE/);
  });
});
