import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { errorCode } from '@tessera/contracts';
import { peerHeaders, type OAuthForward } from '@tessera/issuer';
import { newFamilyId, newRefreshToken } from '@tessera/tokens';
import { createOAuthForwarding } from './oauth-forward-to-home.js';

/**
 * Region b's OAuth forwarding against a home issuer played by a plain HTTP server: what crosses the
 * link (only the validated fields, the peer secret, what b vouches for), what comes back (home's
 * answer, never its DPoP-Nonce), and what b decides when home is out of reach.
 */
const secret = 'p'.repeat(40);
let home: Server | undefined;
let app: FastifyInstance | undefined;
const reached: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];

afterEach(async () => {
  reached.length = 0;
  await app?.close();
  home?.closeAllConnections();
  await new Promise((resolve) => (home ? home.close(resolve) : resolve(undefined)));
  app = undefined;
  home = undefined;
});

async function startHome(up: boolean): Promise<string> {
  home = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      reached.push({ url: request.url ?? '', headers: request.headers, body });
      response.writeHead(400, { 'content-type': 'application/json', 'cache-control': 'no-store', 'dpop-nonce': 'home-nonce', 'x-home-only': '1' }).end('{"error":"invalid_grant"}');
    });
  });
  await new Promise<void>((resolve) => home!.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(home.address() as AddressInfo).port}`;
  if (!up) {
    await new Promise((resolve) => home!.close(resolve));
    home = undefined;
  }
  return origin;
}

/** Region b, whose two OAuth routes answer with what the forwarding made of the request. */
async function regionB(origin: string, revokedHere: unknown[] = []) {
  const forwarding = createOAuthForwarding({
    regions: { own: 'b', peers: { a: origin } },
    secret,
    timeoutSeconds: 2,
    revokeTimeoutSeconds: 0.5,
    revokeHere: async (refreshToken, _request, expected) => {
      revokedHere.push({ refreshToken, expected });
      return { revokedAt: 1 };
    },
  });
  app = Fastify({ logger: false });
  for (const url of ['/oauth2/token', '/oauth2/revoke']) {
    app.post(url, async (request) => {
      try {
        return await forwarding(request.body as OAuthForward, request); // the test's own JSON: an OAuthForward
      } catch (error) {
        return { thrown: errorCode(error) };
      }
    });
  }
}

const client = { clientId: 'login-1', accountId: 'acct_1', issuer: 'https://b.example', dpopJkt: 'j'.repeat(43) };
const forwardOf = (familyId: string, refreshToken?: string): OAuthForward => ({
  familyId,
  refreshToken,
  form: refreshToken === undefined ? { token: 'an.access.token' } : { grant_type: 'refresh_token', refresh_token: refreshToken },
  client,
});
const ask = async (url: string, forward: OAuthForward) => (await app!.inject({ method: 'POST', url, payload: forward })).json<Record<string, unknown>>();

describe('the OAuth door\'s forwarding to a family\'s home region', () => {
  it('sends home only the validated fields and what b vouches for, and relays home\'s answer without its DPoP-Nonce', async () => {
    await regionB(await startHome(true));
    const refreshToken = newRefreshToken(newFamilyId('a'));
    const outcome = await ask('/oauth2/token', forwardOf(newFamilyId('a'), refreshToken));
    expect(outcome).toEqual({ kind: 'relayed', status: 400, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: '{"error":"invalid_grant"}' });
    expect(reached).toHaveLength(1);
    const [sent] = reached;
    expect(sent!.url).toBe('/oauth2/token');
    expect(sent!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(sent!.body))).toEqual({ grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(sent!.headers[peerHeaders.secret]).toBe(secret);
    expect(sent!.headers[peerHeaders.clientId]).toBe('login-1');
    expect(sent!.headers[peerHeaders.oauthIssuer]).toBe('https://b.example');
    expect(sent!.headers[peerHeaders.dpopJkt]).toBe('j'.repeat(43));
    // The account is for a decision here; it never crosses the link.
    expect(JSON.stringify(sent!.headers)).not.toContain('acct_1');
  });

  it('answers "home" for a family of its own region, and refuses a region no peer is configured for like an invalid token', async () => {
    await regionB(await startHome(true));
    expect(await ask('/oauth2/token', forwardOf(newFamilyId('b'), 'tsr_x'))).toEqual({ kind: 'home' });
    expect(await ask('/oauth2/revoke', forwardOf(newFamilyId('zz9')))).toEqual({ thrown: 'ERR_REFRESH_TOKEN_INVALID' });
    expect(reached).toEqual([]);
  });

  it('with home out of reach: a refresh is unavailable, a refresh token\'s revoke is decided here for the client\'s account, an access token\'s is unavailable', async () => {
    const revokedHere: unknown[] = [];
    await regionB(await startHome(false), revokedHere);
    const refreshToken = newRefreshToken(newFamilyId('a'));
    expect(await ask('/oauth2/token', forwardOf(newFamilyId('a'), refreshToken))).toEqual({ kind: 'unavailable', retryAfterSeconds: 5 });
    expect(await ask('/oauth2/revoke', forwardOf(newFamilyId('a'), refreshToken))).toEqual({ kind: 'revoked-here' });
    expect(revokedHere).toEqual([{ refreshToken, expected: { accountId: 'acct_1' } }]);
    expect(await ask('/oauth2/revoke', forwardOf(newFamilyId('a')))).toEqual({ kind: 'unavailable', retryAfterSeconds: 5 });
  });
});
