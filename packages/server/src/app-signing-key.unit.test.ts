import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { SigningKeyUnavailable, type TokenService } from '@tessera/issuer';
import { buildApp } from './app.js';
import { createMetrics } from './metrics.js';

/** An issuer whose key was just retired elsewhere: every token operation finds no key. */
const unavailable = async (): Promise<never> => {
  throw new SigningKeyUnavailable();
};
const tokens: TokenService = { getToken: unavailable, refreshToken: unavailable, revokeToken: unavailable, legacyAuthenticate: unavailable };

let app: FastifyInstance;
beforeAll(async () => {
  app = await buildApp({ logLevel: 'silent', ready: () => true, metrics: createMetrics(), issuer: { tokens, jwks: () => ({ keys: [] }), v1: true, v5: true } });
});
afterAll(async () => {
  await app.close();
});

describe('a token request that finds no signing key', () => {
  it.each([
    ['/v5/Authorization/get-oauth-token', 'application/json', JSON.stringify({ api_login_id: 'a', transaction_key: 'b' })],
    ['/v5/Authorization/refresh-oauth-token', 'application/json', JSON.stringify({ refresh_token: 'r' })],
    ['/v1/authenticate', 'application/x-www-form-urlencoded', 'apiid=a&apikey=b'],
  ])('%s answers 503 problem+json with Retry-After, not 500', async (url, contentType, payload) => {
    const answer = await app.inject({ method: 'POST', url, headers: { 'content-type': contentType }, payload });
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(answer.headers['retry-after']).toBe('1');
    expect(answer.json()).toMatchObject({ type: 'urn:tessera:problem:unavailable', status: 503 });
  });
});
