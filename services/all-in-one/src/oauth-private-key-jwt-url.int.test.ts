import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { createAccountService, type AccountService, type CreatedAccount } from '@tessera/accounts';
import { epochSeconds, systemClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * private_key_jwt with keys at a URL (`set-client-keys --jwks-url`), as `tessera start` wires it:
 * the issuer fetches the client's JWKS through the egress policy, from a real HTTP server on
 * loopback, which the policy refuses unless TESSERA_EGRESS_ALLOW names it. What the server was
 * asked is counted by the server, and read after each answer.
 */
const publicUrl = 'https://auth.example.test';
const assertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

interface KeyPair {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

async function keyPair(kid: string): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid } };
}

/** The client's server: a JWKS per path, answered as `answers` says, each request counted. */
const served = new Map<string, { keys: JWK[] }>();
const hits = new Map<string, number>();
const answers: Record<string, (response: ServerResponse) => void> = {
  // One byte past the 16 KiB bound, no Content-Length: the bound is kept while reading.
  '/big': (response) => {
    response.write(`{"keys":[],"pad":"${'x'.repeat(16 * 1024)}`);
    response.end('"}');
  },
  // Answers after the 2 s bound, long after the issuer gave up.
  '/slow': (response) => void setTimeout(() => response.end('{"keys":[]}'), 4000).unref(),
};
let jwksServer: Server;
let base: string;
const hitsOf = (path: string) => hits.get(path) ?? 0;

let allowed: InProcessAllInOne;
let refusing: InProcessAllInOne;
let allowedAccounts: AccountService;
let refusingAccounts: AccountService;

beforeAll(async () => {
  jwksServer = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    hits.set(path, hitsOf(path) + 1);
    const answer = answers[path];
    if (answer) return answer(response);
    const jwks = served.get(path);
    if (!jwks) return response.writeHead(404).end();
    // Concurrent requests must find the fetch still in flight: the answer takes a moment.
    return void setTimeout(() => response.writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'max-age=600' }).end(JSON.stringify(jwks)), path === '/shared' ? 150 : 0);
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
  // The negative cases fail clients' authentication on purpose: a budget that does not throttle them.
  const env = { TESSERA_PUBLIC_URL: publicUrl, TESSERA_THROTTLE_CREDENTIAL_FAILURES: '1000' };
  [allowed, refusing] = await Promise.all([startInProcess({ env: { ...env, TESSERA_EGRESS_ALLOW: '127.0.0.1' } }), startInProcess({ env })]);
  const accountsOf = (tessera: InProcessAllInOne) => createAccountService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'test' });
  allowedAccounts = accountsOf(allowed);
  refusingAccounts = accountsOf(refusing);
});
afterAll(async () => {
  expect(allowed?.fatal()).toBeUndefined();
  expect(refusing?.fatal()).toBeUndefined();
  await Promise.all([allowed?.close(), refusing?.close()]);
  jwksServer?.closeAllConnections();
  await new Promise((resolve) => jwksServer?.close(resolve));
});

/** An account whose keys are at `path` of the client's server, set as `--jwks-url` would with TESSERA_EGRESS_ALLOW=127.0.0.1. */
async function clientAt(tessera: InProcessAllInOne, accounts: AccountService, url: string): Promise<CreatedAccount> {
  const client = await accounts.create({ name: `Keys at ${url}`, permissions: ['transaction:charge'], legacy: false });
  await accounts.setClientKeysUrl(client.accountId, url, { plainHttpAllowed: (target) => target.hostname === '127.0.0.1' });
  await tessera.caughtUp();
  return client;
}

async function assertion(client: CreatedAccount, key: KeyPair, kid = key.kid): Promise<string> {
  const now = epochSeconds(systemClock);
  return new SignJWT({ jti: randomUUID() })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(client.apiLoginId)
    .setSubject(client.apiLoginId)
    .setAudience(publicUrl)
    .setIssuedAt(now)
    .setExpirationTime(now + 60)
    .sign(key.privateKey);
}

const clientCredentials = (tessera: InProcessAllInOne, jwt: string) =>
  tessera.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: assertionType, client_assertion: jwt }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

const expectInvalidClient = (answer: Awaited<ReturnType<typeof clientCredentials>>) => {
  expect(answer.statusCode).toBe(401);
  expect(answer.json()).toMatchObject({ error: 'invalid_client' });
  // Nothing of the URL, the address or why the fetch failed reaches the client.
  expect(answer.body).not.toMatch(/127\.0\.0\.1|loopback|timeout|bytes/);
};

describe('--jwks-url: the egress policy', () => {
  it('refuses a loopback URL by default: invalid_client, and the server is never reached', async () => {
    const key = await keyPair('r-1');
    served.set('/refused', { keys: [key.publicJwk] });
    // https passes the check at set time; where the host leads is checked at fetch time.
    const client = await clientAt(refusing, refusingAccounts, `${base.replace('http:', 'https:')}/refused`);
    expectInvalidClient(await clientCredentials(refusing, await assertion(client, key)));
    const plain = await clientAt(refusing, refusingAccounts, `${base}/refused`);
    expectInvalidClient(await clientCredentials(refusing, await assertion(plain, key)));
    expect(hitsOf('/refused')).toBe(0);
  });

  it('fetches from it when TESSERA_EGRESS_ALLOW names it, and keeps the keys for their max-age', async () => {
    const key = await keyPair('a-1');
    served.set('/accepted', { keys: [key.publicJwk] });
    const client = await clientAt(allowed, allowedAccounts, `${base}/accepted?tenant=acme`);
    expect((await clientCredentials(allowed, await assertion(client, key))).statusCode).toBe(200);
    expect((await clientCredentials(allowed, await assertion(client, key))).statusCode).toBe(200);
    expect(hitsOf('/accepted')).toBe(1);
  });

  it('concurrent assertions of one client share one fetch', async () => {
    const key = await keyPair('s-1');
    served.set('/shared', { keys: [key.publicJwk] });
    const client = await clientAt(allowed, allowedAccounts, `${base}/shared`);
    const answers = await Promise.all(Array.from({ length: 5 }, async () => clientCredentials(allowed, await assertion(client, key))));
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(hitsOf('/shared')).toBe(1);
  });
});

describe('--jwks-url: rotation and the refetch bound', () => {
  it('picks up a rotated key by refetching on its unknown kid, then refetches no more than once a minute', async () => {
    const [first, second, third] = await Promise.all([keyPair('rot-1'), keyPair('rot-2'), keyPair('rot-3')]);
    served.set('/rotating', { keys: [first.publicJwk] });
    const client = await clientAt(allowed, allowedAccounts, `${base}/rotating`);
    expect((await clientCredentials(allowed, await assertion(client, first))).statusCode).toBe(200);
    expect(hitsOf('/rotating')).toBe(1);

    // The client rotates: its server now serves the second key only.
    served.set('/rotating', { keys: [second.publicJwk] });
    expect((await clientCredentials(allowed, await assertion(client, second))).statusCode).toBe(200);
    expect(hitsOf('/rotating')).toBe(2);
    // The refetched set is the cached one now: the first key is gone.
    expectInvalidClient(await clientCredentials(allowed, await assertion(client, first)));

    // Another unknown kid within the minute: no fetch, though the server would have the key.
    served.set('/rotating', { keys: [third.publicJwk] });
    expectInvalidClient(await clientCredentials(allowed, await assertion(client, third)));
    expectInvalidClient(await clientCredentials(allowed, await assertion(client, second, 'made-up')));
    expect(hitsOf('/rotating')).toBe(2);
  });
});

describe('--jwks-url: the bounds of a fetch', () => {
  it('refuses an answer over 16 KiB', async () => {
    const key = await keyPair('b-1');
    const client = await clientAt(allowed, allowedAccounts, `${base}/big`);
    expectInvalidClient(await clientCredentials(allowed, await assertion(client, key)));
    expect(hitsOf('/big')).toBe(1);
  });

  it('gives up on a server slower than 2 s, and answers invalid_client within the bound', async () => {
    const key = await keyPair('t-1');
    const client = await clientAt(allowed, allowedAccounts, `${base}/slow`);
    const jwt = await assertion(client, key);
    const started = performance.now();
    expectInvalidClient(await clientCredentials(allowed, jwt));
    const elapsed = performance.now() - started;
    expect(hitsOf('/slow')).toBe(1);
    expect(elapsed).toBeGreaterThanOrEqual(1900);
    expect(elapsed).toBeLessThan(3500);
  });

  it('a failed fetch is not repeated on every request: the next assertion is refused without one', async () => {
    const key = await keyPair('m-1');
    const client = await clientAt(allowed, allowedAccounts, `${base}/missing`);
    expectInvalidClient(await clientCredentials(allowed, await assertion(client, key)));
    expectInvalidClient(await clientCredentials(allowed, await assertion(client, key)));
    expect(hitsOf('/missing')).toBe(1);
  });
});
