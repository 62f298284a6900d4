import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { EventMetadata } from '@tessera/contracts';
import { createMetrics, createReadiness } from '@tessera/host';
import { buildApp } from '@tessera/server';
import { PublicKeySet, newFamilyId, newRefreshToken } from '@tessera/tokens';
import { createInMemoryAttemptLimiter, isForwardedByPeer, issuerRoutes, IssuerRefusal, peerHeaders, type InterfaceTokenOperations } from '@tessera/issuer';
import { decideHome, type RegionMap } from './home-region.js';
import { systemClock } from '@tessera/timing';

describe('which region answers a refresh (decideHome)', () => {
  const regions: RegionMap = { own: 'b', peers: { a: 'https://issuer.a:8443' } };
  const tokenOf = (region?: string) => newRefreshToken(newFamilyId(region));

  it('forwards a family homed in a peer region to that peer, and keeps its own region\'s families', () => {
    expect(decideHome(tokenOf('a'), regions, false)).toEqual({ kind: 'forward', region: 'a', origin: 'https://issuer.a:8443' });
    expect(decideHome(tokenOf('b'), regions, false)).toEqual({ kind: 'local' });
  });

  it('never forwards a request that was already forwarded (no loops)', () => {
    expect(decideHome(tokenOf('a'), regions, true)).toEqual({ kind: 'local' });
  });

  it('refuses a region nobody configured, and leaves what is not a refresh token to the local refusal', () => {
    expect(decideHome(tokenOf('zz9'), regions, false)).toEqual({ kind: 'unknown-region', region: 'zz9' });
    expect(decideHome('tsr_nonsense', regions, false)).toEqual({ kind: 'local' });
  });

  it('homes bare ids in TESSERA_BARE_FAMILY_REGION, else in its own region; with no region at all everything is local', () => {
    expect(decideHome(tokenOf(), regions, false)).toEqual({ kind: 'local' });
    expect(decideHome(tokenOf(), { ...regions, bareFamilies: 'a' }, false)).toMatchObject({ kind: 'forward', region: 'a' });
    expect(decideHome(tokenOf(), { peers: {} }, false)).toEqual({ kind: 'local' });
    expect(decideHome(tokenOf('a'), { peers: {} }, false)).toEqual({ kind: 'unknown-region', region: 'a' });
  });
});

describe('the peer link on the home issuer', () => {
  const secret = 'p'.repeat(40);
  const seen: { metadata: EventMetadata }[] = [];
  const pair = { issuedAt: 1, accessToken: 'at', refreshToken: 'rt', expiresAt: 2, scope: [] };
  const refuse = async (): Promise<never> => {
    throw new IssuerRefusal('ERR_INVALID_CLIENT', 'no');
  };
  const tokens: InterfaceTokenOperations = {
    getToken: refuse,
    refreshToken: async (token, metadata) => {
      seen.push({ metadata });
      if (token !== 'good') throw new IssuerRefusal('ERR_REFRESH_TOKEN_INVALID', 'invalid refresh token');
      return pair;
    },
    revokeToken: refuse,
    legacyAuthenticate: refuse,
  };
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    seen.length = 0;
  });
  const start = async () => {
    await app?.close();
    const throttle = { limiter: createInMemoryAttemptLimiter({ windowSeconds: 300, clock: systemClock }), limits: { credential: 3, address: 3, refresh: 2, proxy: 0 }, uncharged: isForwardedByPeer };
    app = await buildApp({
      logLevel: 'silent',
      readiness: createReadiness(),
      metrics: createMetrics(),
      routes: [issuerRoutes({ tokens, keys: new PublicKeySet(), now: () => Math.floor(systemClock.now() / 1000) }, throttle, { secret, forwarding: undefined })],
    });
  };
  const refresh = (token: string, headers: Record<string, string> = {}) =>
    app!.inject({ method: 'POST', url: '/v5/Authorization/refresh-oauth-token', remoteAddress: '10.0.0.9', headers, payload: { refresh_token: token } });

  // Each refusal is charged to the address's refresh budget (2 here): the third attempt is a 429.
  it('refuses a forwarded request with a wrong or missing peer secret, or a forwarded address that is not one, before the token service sees it, charging the address', async () => {
    await start();
    const attempts: Record<string, string>[] = [
      { [peerHeaders.forwardedFor]: '192.0.2.1' },
      { [peerHeaders.forwardedFor]: '192.0.2.1', [peerHeaders.secret]: 'x'.repeat(40) },
      { [peerHeaders.secret]: secret },
    ];
    const answers = [];
    for (const headers of attempts) answers.push(await refresh('good', headers));
    expect(answers.map((answer) => answer.statusCode)).toEqual([401, 401, 429]);
    for (const answer of answers) expect(answer.body).not.toContain(secret);
    // Once spent, the right secret from that address is a 429 too: nothing tells a right guess from a wrong one.
    expect((await refresh('good', { [peerHeaders.forwardedFor]: '192.0.2.1', [peerHeaders.secret]: secret })).statusCode).toBe(429);
    expect(seen).toEqual([]);
    await start();
    const notAnAddress = await refresh('good', { [peerHeaders.forwardedFor]: 'forged<script>', [peerHeaders.secret]: secret });
    expect(notAnAddress.statusCode).toBe(401);
    expect(seen).toEqual([]);
  });

  it('gives the peer secret nothing on get-oauth-token, which no peer forwards: no exemption, no forwarded address', async () => {
    await start();
    const fromPeer = { [peerHeaders.forwardedFor]: '192.0.2.1', [peerHeaders.secret]: secret };
    const getToken = () => app!.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', remoteAddress: '10.0.0.9', headers: fromPeer, payload: { api_login_id: 'tsl_a', transaction_key: 'k' } });
    // The credential budget is 3.
    expect([(await getToken()).statusCode, (await getToken()).statusCode, (await getToken()).statusCode, (await getToken()).statusCode]).toEqual([401, 401, 401, 429]);
  });

  it('records the client\'s own address from an authenticated peer, and spends no budget of the peer\'s address', async () => {
    await start();
    const fromPeer = { [peerHeaders.forwardedFor]: '192.0.2.1', [peerHeaders.secret]: secret };
    expect((await refresh('good', fromPeer)).statusCode).toBe(200);
    expect(seen[0]!.metadata.sourceAddress).toBe('192.0.2.1');
    // Far past the refresh budget of 2: the forwarding issuer throttles by the client's address.
    for (let i = 0; i < 5; i += 1) expect((await refresh('bad', fromPeer)).statusCode).toBe(401);
    // The same address without the link is throttled as usual.
    expect([(await refresh('bad')).statusCode, (await refresh('bad')).statusCode, (await refresh('bad')).statusCode]).toEqual([401, 401, 429]);
  });
});
