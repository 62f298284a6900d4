import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '@tessera/domain';
import { createMetrics, createReadiness } from '@tessera/host';
import { buildApp } from '@tessera/server';
import { PublicKeySet, newFamilyId, newRefreshToken } from '@tessera/tokens';
import { issuerRoutes, IssuerRefusal, type InterfaceTokenOperations } from '@tessera/issuer';
import { createForwarding } from './forward-to-home.js';
import { PeerHealth } from './peer-health.js';

/**
 * Region b's issuer, forwarding a-homed families to a home issuer played by a plain HTTP server
 * that answers as told, refuses connections, or never answers: when home is out of reach a revoke
 * is decided here (revokeHere), a refresh answers 503 at once.
 */
const secret = 'p'.repeat(40);
/** What reached region b's own token service: nothing should, for an a-homed family. */
const servedHere: string[] = [];
const refuse = (operation: string) => async (): Promise<never> => {
  servedHere.push(operation);
  throw new IssuerRefusal('ERR_INVALID_CLIENT', 'no');
};
const tokens: InterfaceTokenOperations = { getToken: refuse('get'), refreshToken: refuse('refresh'), revokeToken: refuse('revoke'), legacyAuthenticate: refuse('legacy') };

let home: Server | undefined;
/** Requests that reached the home server: a forward that was tried. */
let reachedHome = 0;
let app: FastifyInstance | undefined;
afterEach(async () => {
  servedHere.length = 0;
  reachedHome = 0;
  await app?.close();
  home?.closeAllConnections();
  await new Promise((resolve) => (home ? home.close(resolve) : resolve(undefined)));
  app = undefined;
  home = undefined;
});

async function startHome(answer: 'refused' | 'silent' | number): Promise<string> {
  home = createServer((_request, response) => {
    reachedHome += 1;
    if (answer === 'silent') return;
    response.writeHead(answer as number, { 'content-type': 'application/json' }).end(JSON.stringify({ revoked: true, timestamp: '2026-01-01T00:00:00.000Z' }));
  });
  await new Promise<void>((resolve) => home!.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(home.address() as AddressInfo).port}`;
  if (answer === 'refused') {
    await new Promise((resolve) => home!.close(resolve));
    home = undefined;
  }
  return origin;
}

async function regionB(origin: string, revokeHere: (token: string) => Promise<{ revokedAt: number }>, health = new PeerHealth({ peers: { a: origin }, failures: 3, probeIntervalSeconds: 60 })) {
  const forwarding = createForwarding({ regions: { own: 'b', peers: { a: origin } }, secret, timeoutSeconds: 5, revokeTimeoutSeconds: 0.3, health, revokeHere: (token) => revokeHere(token) });
  app = await buildApp({ logLevel: 'silent', readiness: createReadiness(), metrics: createMetrics(), routes: [issuerRoutes({ tokens, keys: new PublicKeySet(), now: () => 0 }, undefined, { secret, forwarding })] });
  return health;
}

const post = (route: 'revoke' | 'refresh', token: string) => app!.inject({ method: 'POST', url: `/v5/Authorization/${route}-oauth-token`, payload: { refresh_token: token } });
const aToken = () => newRefreshToken(newFamilyId('a'));

describe('revoke where the request arrives, when the home region is out of reach', () => {
  it('never hands a request it answered (forwarded, decided here, or 503) to this region\'s own token service as well', async () => {
    await regionB(await startHome(200), async () => ({ revokedAt: 1 }));
    expect((await post('refresh', aToken())).statusCode).toBe(200);
    expect((await post('revoke', aToken())).statusCode).toBe(200);
    await app!.close();
    await regionB(await startHome('refused'), async () => ({ revokedAt: 1 }));
    expect((await post('revoke', aToken())).statusCode).toBe(200);
    expect((await post('refresh', aToken())).statusCode).toBe(503);
    // The route's handler goes on after the answer in promise callbacks, with no I/O before it would
    // reach the token service: one turn of the event loop has run them all.
    await new Promise((resolve) => setImmediate(resolve));
    expect(servedHere).toEqual([]);
  });

  it('forwards while home answers, and relays its answer: nothing is decided here', async () => {
    const decidedHere: string[] = [];
    await regionB(await startHome(200), async (token) => (decidedHere.push(token), { revokedAt: 1 }));
    expect((await post('revoke', aToken())).statusCode).toBe(200);
    expect(decidedHere).toEqual([]);
  });

  it('decides here when the connection is refused, and answers as the interface says: 200, revoked, a timestamp, no-store', async () => {
    const token = aToken();
    const decidedHere: string[] = [];
    await regionB(await startHome('refused'), async (presented) => (decidedHere.push(presented), { revokedAt: 1_800_000_000 }));
    const answer = await post('revoke', token);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ revoked: true, timestamp: '2027-01-15T08:00:00.000Z' });
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(decidedHere).toEqual([token]);
  });

  it('decides here when home does not answer within TESSERA_PEER_REVOKE_TIMEOUT, and the detector marks home at once', async () => {
    const decidedHere: string[] = [];
    const health = await regionB(await startHome('silent'), async (token) => (decidedHere.push(token), { revokedAt: 1 }));
    const first = aToken();
    expect((await post('revoke', first)).statusCode).toBe(200);
    // Forwarded first, and decided here once home had not answered.
    expect(reachedHome).toBe(1);
    expect(decidedHere).toEqual([first]);
    expect(health.isReachable('a')).toBe(false);
    // Marked: the next revoke is decided here without trying the link at all. A forward would have
    // reached home before the answer, which waits for the forward to fail.
    const next = aToken();
    expect((await post('revoke', next)).statusCode).toBe(200);
    expect(reachedHome).toBe(1);
    expect(decidedHere).toEqual([first, next]);
  });

  it('decides here when home answers 503 (it could not decide), but relays home\'s 401 as it is', async () => {
    await regionB(await startHome(503), async () => ({ revokedAt: 1 }));
    expect((await post('revoke', aToken())).statusCode).toBe(200);
    await app!.close();
    home!.closeAllConnections();
    await new Promise((resolve) => home!.close(resolve));
    await regionB(await startHome(401), async () => ({ revokedAt: 1 }));
    expect((await post('revoke', aToken())).statusCode).toBe(401);
  });

  it('answers 503 with Retry-After when the token cannot be proven here, and 401 when it is proven dead', async () => {
    await regionB(await startHome('refused'), async () => {
      throw new DomainError('ERR_REFRESH_TOKEN_UNPROVEN', 'no check material for this family here yet');
    });
    const unproven = await post('revoke', aToken());
    expect(unproven.statusCode).toBe(503);
    expect(unproven.headers['retry-after']).toBe('5');
    expect(unproven.headers['content-type']).toContain('application/problem+json');
    await app!.close();
    await regionB(await startHome('refused'), async () => {
      throw new IssuerRefusal('ERR_REFRESH_TOKEN_REVOKED', 'revoked');
    });
    expect((await post('revoke', aToken())).statusCode).toBe(401);
  });

  it('answers a refresh 503 at once while home is marked unreachable: rotation happens only at home', async () => {
    const health = await regionB(await startHome(200), async () => ({ revokedAt: 1 }));
    health.failed('a', 'refused', { wholeBudget: true });
    const answer = await post('refresh', aToken());
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['retry-after']).toBe('5');
  });
});
