import { readFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundToKey, dpopClient } from '../support/dpop.js';
import { findNginx, startNginx, type RunningNginx } from '../support/nginx.js';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Real NGINX in front of a real all-in-one: the forward-auth configuration shipped in
 * infra/nginx/nginx.conf (only its host names and ports changed), and the reverse-proxy snippet
 * of docs/operations.md with TESSERA_TRUSTED_PROXIES. Skips loudly where NGINX is not installed;
 * .ci/run provides it.
 */
const nginx = findNginx();
if (!nginx) console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING NGINX e2e: no nginx on PATH, at /usr/sbin/nginx or in TESSERA_NGINX. infra/nginx/nginx.conf is NOT run in this run.\n${'!'.repeat(78)}\n`);

const repositoryRoot = resolve(import.meta.dirname, '..', '..');

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** Plain HTTP to NGINX's listener (NGINX listens on HTTP here, as in the shipped example). */
function send(port: number, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolveAnswer, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers }, (incoming) => {
      let text = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => (text += chunk));
      incoming.on('end', () => resolveAnswer({ status: incoming.statusCode ?? 0, headers: incoming.headers, text }));
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

describe.skipIf(!nginx)('NGINX auth_request with infra/nginx/nginx.conf', () => {
  let tessera: TesseraProcess;
  let proxy: RunningNginx;
  let app: Server;
  let nginxPort: number;
  /** What the application behind NGINX received. */
  const reached: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    tessera = await startTessera();
    app = createServer((incoming, outgoing) => {
      reached.push(incoming.headers);
      outgoing.writeHead(200, { 'content-type': 'application/json' }).end('{"charged":true}');
    });
    await new Promise<void>((resolveListen) => app.listen(0, '127.0.0.1', resolveListen));
    const appPort = (app.address() as AddressInfo).port; // a TCP server's address
    nginxPort = await freePort();
    const shipped = readFileSync(resolve(repositoryRoot, 'infra/nginx/nginx.conf'), 'utf8');
    const inside = shipped.slice(shipped.indexOf('http {') + 'http {'.length, shipped.lastIndexOf('}'));
    const rendered = inside
      .replace('server verifier:8443;', `server 127.0.0.1:${new URL(tessera.baseUrl).port};`)
      .replace('server app:8080;', `server 127.0.0.1:${appPort};`)
      .replace('listen 8080;', `listen 127.0.0.1:${nginxPort};`);
    // If the shipped file changes shape, the test must notice rather than run something else.
    expect(rendered).not.toMatch(/verifier:8443|app:8080|listen 8080;/);
    proxy = await startNginx(nginx!, rendered, nginxPort);
  }, 60_000);
  afterAll(async () => {
    await proxy?.stop();
    await new Promise((resolveClose) => app?.close(resolveClose));
    await tessera?.stop();
  });

  const tokenFor = async (account: Credentials) => {
    const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(answer.status).toBe(200);
    return JSON.parse(answer.text) as { token: string; refresh_token: string };
  };
  const charge = (token: string | undefined, headers: Record<string, string> = {}) =>
    send(nginxPort, '/v5/Transaction/charge', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers },
      body: '{}',
    });

  it('passes a valid token with the permission through, with the verified subject, scope and client id, and without the token', async () => {
    const account = await tessera.createAccount();
    const { token } = await tokenFor(account);
    const before = reached.length;
    const answer = await charge(token, { 'x-tessera-subject': 'someone-else' });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('{"charged":true}');
    expect(reached).toHaveLength(before + 1);
    const seen = reached.at(-1)!;
    const claims = claimsOf(token);
    expect(seen['x-tessera-subject']).toBe(claims.sub);
    expect(seen['x-tessera-client-id']).toBe(claims.client_id);
    expect(seen['x-tessera-scope']).toBe(claims.scope);
    expect(seen.authorization).toBeUndefined();
  });

  it('answers 401 with the bearer challenge for no token and for a forged one, and never reaches the application', async () => {
    const before = reached.length;
    const missing = await charge(undefined);
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
    const account = await tessera.createAccount();
    const { token } = await tokenFor(account);
    const [header, payload] = token.split('.');
    const forged = await charge(`${header}.${payload}.${'A'.repeat(86)}`);
    expect(forged.status).toBe(401);
    expect(forged.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect(reached).toHaveLength(before);
  });

  it('answers 403 for a token without transaction:charge', async () => {
    const account = await tessera.createAccount({ permissions: ['account:read'] });
    const { token } = await tokenFor(account);
    const before = reached.length;
    const answer = await charge(token);
    expect(answer.status).toBe(403);
    // auth_request copies WWW-Authenticate on a 401 only, so the insufficient_scope challenge
    // stops at NGINX; the status is what reaches the client.
    expect(reached).toHaveLength(before);
  });

  it('passes a DPoP-bound token with a proof for the URL the client called at NGINX; refuses it as a bearer token, and a replayed proof', async () => {
    const account = await tessera.createAccount();
    const client = await dpopClient();
    const token = boundToKey((await tokenFor(account)).token, client.jkt, tessera.dataDir);
    // What the client addressed: NGINX, not the verifier or the application behind it.
    const called = `http://127.0.0.1:${nginxPort}/v5/Transaction/charge`;
    const proof = await client.proof('POST', called, token);
    const before = reached.length;
    const dpop = (headers: Record<string, string>) => charge(undefined, { authorization: `DPoP ${token}`, ...headers });
    const passed = await dpop({ dpop: proof });
    expect(passed.status).toBe(200);
    expect(reached).toHaveLength(before + 1);
    expect(reached.at(-1)!['x-tessera-subject']).toBe(claimsOf(token).sub);

    const replayed = await dpop({ dpop: proof });
    expect(replayed.status).toBe(401);
    expect(replayed.headers['www-authenticate']).toMatch(/^DPoP error="invalid_dpop_proof", error_description="the DPoP proof was used before/);
    const asBearer = await charge(token);
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers['www-authenticate']).toBe('Bearer error="invalid_token", DPoP algs="ES256 RS256 PS256 EdDSA"');
    // A proof for the verifier's own URL, or one naming the URL through X-Forwarded-* the client wrote itself, is not for this request.
    const forVerifier = await dpop({ dpop: await client.proof('POST', `${tessera.baseUrl}/v5/Transaction/charge`, token) });
    expect(forVerifier.status).toBe(401);
    const smuggled = await dpop({
      dpop: await client.proof('GET', 'https://elsewhere.example/x', token),
      'x-forwarded-method': 'GET',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'elsewhere.example',
      'x-forwarded-uri': '/x',
    });
    expect(smuggled.status).toBe(401);
    expect(reached).toHaveLength(before + 1);
  });

  it('refuses a token as soon as its refresh token is revoked', async () => {
    const account = await tessera.createAccount();
    const pair = await tokenFor(account);
    expect((await charge(pair.token)).status).toBe(200);
    expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token })).status).toBe(200);
    expect((await charge(pair.token)).status).toBe(401);
  });
});

describe.skipIf(!nginx)('NGINX as the reverse proxy of docs/operations.md, with TESSERA_TRUSTED_PROXIES=127.0.0.1', () => {
  let tessera: TesseraProcess;
  let proxy: RunningNginx;
  let nginxPort: number;
  const budget = 3;

  beforeAll(async () => {
    tessera = await startTessera({ TESSERA_TRUSTED_PROXIES: '127.0.0.1', TESSERA_THROTTLE_CREDENTIAL_FAILURES: String(budget) });
    nginxPort = await freePort();
    // The snippet from docs/operations.md, with the upstream's port; TLS to Tessera as in production.
    proxy = await startNginx(
      nginx!,
      [
        '  server {',
        `    listen 127.0.0.1:${nginxPort};`,
        '    location / {',
        `      proxy_pass https://127.0.0.1:${new URL(tessera.baseUrl).port};`,
        '      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
        '    }',
        '  }',
      ].join('\n'),
      nginxPort,
    );
  }, 60_000);
  afterAll(async () => {
    await proxy?.stop();
    await tessera?.stop();
  });

  it('throttles each client behind NGINX on its own: the one guessing gets 429, the one beside it its token', async () => {
    const account = await tessera.createAccount();
    // NGINX sees every test request from 127.0.0.1; each client says who it is the way a proxy in front of NGINX would.
    const getToken = (transactionKey: string, client: string) =>
      send(nginxPort, '/v5/Authorization/get-oauth-token', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
        body: JSON.stringify({ api_login_id: account.api_login_id, transaction_key: transactionKey }),
      }).then((answer) => answer.status);
    for (let attempt = 0; attempt < budget; attempt += 1) expect(await getToken('wrong-key', '198.51.100.7')).toBe(401);
    expect(await getToken(account.transaction_key, '198.51.100.7')).toBe(429);
    expect(await getToken(account.transaction_key, '198.51.100.8')).toBe(200);
    await expect.poll(() => tessera.logs().includes('"remoteAddress":"198.51.100.8"'), { timeout: 5_000 }).toBe(true);
  });
});
