import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inspect } from 'node:util';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileTokenLock, LegacyTesseraClient, TesseraClient, TesseraError, type FetchLike } from '@tessera/client';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { httpsFetch } from '../support/https-fetch.js';
import { until } from '../support/until.js';

/**
 * @tessera/client against the real all-in-one server over HTTPS. Request counts are taken
 * from the server's own log (one JSON line per request), not from the client.
 */
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
let tessera: TesseraProcess;
let account: Credentials;
let caFetch: FetchLike;

beforeAll(async () => {
  // v5 lifetimes stay at their defaults (time is moved by the client's clock); v1 tokens live 2 s.
  // debug: allowed verifications are logged only at debug, and the counts below include them.
  tessera = await startTessera({ TESSERA_LEGACY_TOKEN_TTL: '2', TESSERA_LOG_LEVEL: 'debug' });
  account = await tessera.createAccount({ legacy: true });
  caFetch = httpsFetch(readFileSync(join(tessera.dataDir, 'tls', 'self-signed.crt')));
});
afterAll(async () => {
  await tessera?.stop();
});

interface Pair {
  token: string;
  refresh_token: string;
}

/** Wraps a fetch and keeps every token pair that passes through it, as the test's view of the client's secrets. */
function recording(inner: FetchLike): { fetch: FetchLike; pairs: Pair[]; legacyTokens: string[] } {
  const pairs: Pair[] = [];
  const legacyTokens: string[] = [];
  const fetch: FetchLike = async (input, init) => {
    const response = await inner(input, init);
    const path = new URL(String(input)).pathname;
    if (response.ok && /oauth-token$/.test(path) && !path.endsWith('revoke-oauth-token')) pairs.push((await response.clone().json()) as Pair);
    if (response.ok && path === '/v1/authenticate') {
      legacyTokens.push(((await response.clone().json()) as { result: { authentication_token: string } }).result.authentication_token);
    }
    return response;
  };
  return { fetch, pairs, legacyTokens };
}

// ---- the server's log as the witness ----

interface LoggedRequest {
  readonly method: string;
  readonly url: string;
  readonly status: number;
}

/** A point in time: requests the server started handling from then on are counted. */
const logMark = () => Date.now();

/**
 * Requests the server started handling at or after `mark`, from their "request completed" lines
 * (one per request, stamped when the answer went; minus responseTime, when the request came).
 * Same machine, same clock; log lines that reach the pipe late are still placed right.
 */
function requestsSince(server: TesseraProcess, mark: number): LoggedRequest[] {
  const requests: LoggedRequest[] = [];
  for (const line of server.logs().split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { msg?: string; time?: number; responseTime?: number; req?: { method: string; url: string }; res?: { statusCode: number } };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (entry.msg !== 'request completed' || !entry.req || !entry.res || entry.time === undefined || entry.responseTime === undefined) continue;
    if (entry.time - entry.responseTime >= mark) requests.push({ method: entry.req.method, url: entry.req.url, status: entry.res.statusCode });
  }
  return requests;
}

/**
 * The requests logged since `mark`, once every line of the requests made so far has arrived: a
 * sentinel request goes last, and the server writes its line after theirs.
 */
async function settledRequestsSince(server: TesseraProcess, mark: number): Promise<LoggedRequest[]> {
  const sentinel = `/sentinel-${randomUUID()}`;
  await server.request(sentinel);
  await until(() => requestsSince(server, mark).some(to(sentinel)), 'the sentinel request\'s access line');
  return requestsSince(server, mark).filter((request) => request.url !== sentinel);
}

const to = (path: string) => (r: LoggedRequest) => r.url === path;
const GET_TOKEN = '/v5/Authorization/get-oauth-token';
const REFRESH = '/v5/Authorization/refresh-oauth-token';
const REVOKE = '/v5/Authorization/revoke-oauth-token';
const CHARGE = '/v5/Transaction/charge';

const charge = (token: string) =>
  tessera.request(CHARGE, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"amount":"1.00"}' });

function v5Client(options: Partial<ConstructorParameters<typeof TesseraClient>[0]> = {}) {
  return new TesseraClient({ baseUrl: tessera.baseUrl, apiLoginId: account.api_login_id, transactionKey: account.transaction_key, fetch: caFetch, ...options });
}

describe('TesseraClient — caching and single flight (docs/client.md)', () => {
  it('caches the access token: repeated calls make one get-oauth-token request', async () => {
    const mark = logMark();
    const client = v5Client();
    const first = await client.getAccessToken();
    expect(await client.getAccessToken()).toBe(first);
    expect(await client.getAccessToken()).toBe(first);
    expect((await charge(first)).status).toBe(200);
    const requests = await settledRequestsSince(tessera, mark);
    expect(requests.filter(to(GET_TOKEN))).toHaveLength(1);
    expect(requests.filter(to(REFRESH))).toHaveLength(0);
    await client.close();
  });

  it('1000 concurrent getAccessToken() calls at expiry cause exactly one refresh at the server', async () => {
    let offsetMs = 0;
    const client = v5Client({ clock: () => Date.now() + offsetMs });
    const before = await client.getAccessToken();
    const mark = logMark();
    // An hour on (the default lifetime): the cached token is past `expires` minus the skew.
    offsetMs = 3600 * 1000;
    const tokens = await Promise.all(Array.from({ length: 1000 }, () => client.getAccessToken()));

    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).not.toBe(before);
    expect((await charge(tokens[0]!)).status).toBe(200);
    const requests = await settledRequestsSince(tessera, mark);
    const refreshes = requests.filter(to(REFRESH));
    console.info(`1000 concurrent callers at expiry → ${refreshes.length} refresh request(s) at the server`);
    expect(refreshes).toEqual([{ method: 'POST', url: REFRESH, status: 200 }]);
    expect(requests.filter(to(GET_TOKEN))).toHaveLength(0);
    await client.close();
  });

  it('falls back to the API Login ID and Transaction Key when the refresh token was revoked', async () => {
    const recorder = recording(caFetch);
    let offsetMs = 0;
    const client = v5Client({ fetch: recorder.fetch, clock: () => Date.now() + offsetMs });
    const first = await client.getAccessToken();
    const revoked = await tessera.postJson(REVOKE, { refresh_token: recorder.pairs.at(-1)!.refresh_token });
    expect(revoked.status).toBe(200);

    const mark = logMark();
    offsetMs = 3600 * 1000;
    const second = await client.getAccessToken();
    expect(second).not.toBe(first);
    expect((await charge(second)).status).toBe(200);
    const requests = await settledRequestsSince(tessera, mark);
    expect(requests.filter((r) => r.url === REFRESH || r.url === GET_TOKEN)).toEqual([
      { method: 'POST', url: REFRESH, status: 401 },
      { method: 'POST', url: GET_TOKEN, status: 200 },
    ]);
    await client.close();
  });

  /**
   * A refresh that answers 503, as a region does when the family's home region is out of reach
   * (docs/multi-region.md). The server here has one region, so the 503 is made up by the transport;
   * the get-oauth-token that follows goes to the real server. `npm run sim:regions` does the same
   * through a real partition.
   */
  it('falls back to the credentials when a refresh answers 503, and throws a 500 from a refresh as it is', async () => {
    const unavailable = (status: number): FetchLike => async (input, init) => {
      if (new URL(String(input)).pathname === REFRESH) {
        return new Response(JSON.stringify({ type: 'urn:test', title: 'Unavailable', status }), { status, headers: { 'content-type': 'application/problem+json', 'retry-after': '2' } });
      }
      return caFetch(input, init);
    };
    let offsetMs = 0;
    const client = v5Client({ fetch: unavailable(503), clock: () => Date.now() + offsetMs });
    const first = await client.getAccessToken();
    offsetMs = 3600 * 1000;
    const second = await client.getAccessToken();
    expect(second).not.toBe(first);
    expect((await charge(second)).status).toBe(200);
    await client.close();

    offsetMs = 0;
    const failing = v5Client({ fetch: unavailable(500), clock: () => Date.now() + offsetMs });
    await failing.getAccessToken();
    offsetMs = 3600 * 1000;
    await expect(failing.getAccessToken()).rejects.toMatchObject({ code: 'ERR_SERVER', status: 500, operation: 'refresh-oauth-token' });
    await failing.close();
  });
});

describe('TesseraClient.fetch — one retry after a 401', () => {
  it('a GET refused with 401 is retried once with a renewed token', async () => {
    const recorder = recording(caFetch);
    const client = v5Client({ fetch: recorder.fetch });
    await client.getAccessToken();
    // Behind the client's back: the pair is revoked, so the cached access token is refused.
    await tessera.postJson(REVOKE, { refresh_token: recorder.pairs.at(-1)!.refresh_token });

    const mark = logMark();
    const response = await client.fetch('/forward-auth?permission=transaction:charge');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ active: true, client_id: account.api_login_id });
    const requests = await settledRequestsSince(tessera, mark);
    expect(requests.map((r) => `${r.method} ${r.url} ${r.status}`)).toEqual([
      'GET /forward-auth 401',
      `POST ${REFRESH} 401`,
      `POST ${GET_TOKEN} 200`,
      'GET /forward-auth 200',
    ]);
    await client.close();
  });

  it('a POST is not retried unless the caller opts in with retryNonIdempotent', async () => {
    const recorder = recording(caFetch);
    const client = v5Client({ fetch: recorder.fetch });
    await client.getAccessToken();
    await tessera.postJson(REVOKE, { refresh_token: recorder.pairs.at(-1)!.refresh_token });

    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":"1.00"}' };
    let mark = logMark();
    const refused = await client.fetch(CHARGE, init);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect((await settledRequestsSince(tessera, mark)).map((r) => `${r.url} ${r.status}`)).toEqual([`${CHARGE} 401`]);

    mark = logMark();
    const retried = await client.fetch(CHARGE, { ...init, retryNonIdempotent: true });
    expect(retried.status).toBe(200);
    expect((await settledRequestsSince(tessera, mark)).map((r) => `${r.url} ${r.status}`)).toEqual([
      `${CHARGE} 401`,
      `${REFRESH} 401`,
      `${GET_TOKEN} 200`,
      `${CHARGE} 200`,
    ]);
    await client.close();
  });

  it('retries once only: a second 401 is returned, not retried again', async () => {
    const mark = logMark();
    // A transport that spoils every bearer token: the server refuses each attempt.
    const spoiling: FetchLike = (input, init) => {
      const headers = new Headers(init?.headers);
      if (headers.has('authorization')) headers.set('authorization', 'Bearer not-a-token');
      return caFetch(input, { ...init, headers });
    };
    const client = v5Client({ fetch: spoiling });
    const response = await client.fetch('/forward-auth?authenticated=true');
    expect(response.status).toBe(401);
    const requests = await settledRequestsSince(tessera, mark);
    expect(requests.filter(to('/forward-auth'))).toHaveLength(2);
    await client.close();
  });

  it('a 403 comes back as the Response, not as an error', async () => {
    const readOnly = await tessera.createAccount({ permissions: ['reports:read'] });
    const client = new TesseraClient({ baseUrl: tessera.baseUrl, apiLoginId: readOnly.api_login_id, transactionKey: readOnly.transaction_key, fetch: caFetch });
    const response = await client.fetch(CHARGE, { method: 'POST', body: '{}' });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    await client.close();
  });
});

describe('TesseraClient.close()', () => {
  it('revokes the refresh token: the old access token then gets 401 at /v5/Transaction/charge', async () => {
    const recorder = recording(caFetch);
    const client = v5Client({ fetch: recorder.fetch });
    const token = await client.getAccessToken();
    expect((await charge(token)).status).toBe(200);
    await client.close();

    const answer = await charge(token);
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect((await tessera.postJson(REFRESH, { refresh_token: recorder.pairs.at(-1)!.refresh_token })).status).toBe(401);
    await expect(client.getAccessToken()).rejects.toMatchObject({ code: 'ERR_CLIENT_CLOSED' });
    await client.close(); // a second close does nothing
  });
});

describe('FileTokenLock — two processes share one token pair', () => {
  let shortLived: TesseraProcess;
  let shared: Credentials;
  let stateDir: string;

  beforeAll(async () => {
    // Access tokens live 2 s, so both processes want to refresh about once a second.
    shortLived = await startTessera({ TESSERA_ACCESS_TOKEN_TTL: '2' });
    shared = await shortLived.createAccount();
    stateDir = mkdtempSync(join(tmpdir(), 'tessera-client-state-'));
  });
  afterAll(async () => {
    await shortLived?.stop();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  function worker(statePath: string): Promise<{ charges: number; statuses: Record<string, number>; errors: Record<string, number> }> {
    const child = spawn(process.execPath, ['--import', 'tsx', join(repositoryRoot, 'examples', 'shared-token-worker.ts')], {
      cwd: repositoryRoot,
      env: {
        PATH: process.env.PATH,
        // The child uses Node's own fetch, trusting the self-signed certificate the way a user would.
        NODE_EXTRA_CA_CERTS: join(shortLived.dataDir, 'tls', 'self-signed.crt'),
        TESSERA_BASE_URL: shortLived.baseUrl,
        TESSERA_API_LOGIN_ID: shared.api_login_id,
        TESSERA_TRANSACTION_KEY: shared.transaction_key,
        TESSERA_TOKEN_STATE: statePath,
        TESSERA_RUN_SECONDS: '5',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise((resolveRun, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => {
        if (code !== 0) reject(new Error(`worker exited with ${code}: ${stderr}`));
        else resolveRun(JSON.parse(stdout.trim().split('\n').at(-1)!) as Awaited<ReturnType<typeof worker>>);
      });
    });
  }

  it('no refresh is ever made with a used refresh token, and only one pair is ever obtained', async () => {
    const statePath = join(stateDir, 'pair.json');
    const mark = logMark();
    const [a, b] = await Promise.all([worker(statePath), worker(statePath)]);

    const requests = await settledRequestsSince(shortLived, mark);
    const refreshes = requests.filter(to(REFRESH));
    console.info(
      `two processes: ${a.charges} + ${b.charges} charges, ${refreshes.length} refreshes, ` +
        `${requests.filter((r) => r.url === CHARGE && r.status === 401).length} charge attempts retried after another process's refresh`,
    );
    expect(a.errors).toEqual({});
    expect(b.errors).toEqual({});
    expect(Object.keys(a.statuses)).toEqual(['200']);
    expect(Object.keys(b.statuses)).toEqual(['200']);
    // The heart of it: every refresh was made with the current refresh token.
    expect(refreshes.length).toBeGreaterThanOrEqual(3);
    expect(refreshes.filter((r) => r.status !== 200)).toEqual([]);
    // The second process adopted the first one's pair instead of getting its own.
    expect(requests.filter(to(GET_TOKEN))).toHaveLength(1);
    // The shared state holds secrets: owner-only.
    expect(statSync(statePath).mode & 0o777).toBe(0o600);
  });

  it('the state file is written 0600, and a stale lock left by a crashed holder is broken', async () => {
    const statePath = join(stateDir, 'stale.json');
    const lock = new FileTokenLock({ statePath, staleAfterMs: 200, acquireTimeoutMs: 5000 });
    // A crashed holder: the lock file exists and nobody will delete it.
    writeFileSync(`${statePath}.lock`, '{"pid":0}');
    const old = new Date(Date.now() - 10_000);
    utimesSync(`${statePath}.lock`, old, old);
    const client = new TesseraClient({ baseUrl: shortLived.baseUrl, apiLoginId: shared.api_login_id, transactionKey: shared.transaction_key, fetch: caFetchFor(shortLived), lock });
    const token = await client.getAccessToken();
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as { token: string };
    expect(state.token).toBe(token);
    expect(statSync(statePath).mode & 0o777).toBe(0o600);
    await client.close();
    expect(() => statSync(statePath)).toThrow();
  });
});

function caFetchFor(server: TesseraProcess): FetchLike {
  return httpsFetch(readFileSync(join(server.dataDir, 'tls', 'self-signed.crt')));
}

describe('LegacyTesseraClient — the older interface', () => {
  const legacyClient = (options: Partial<ConstructorParameters<typeof LegacyTesseraClient>[0]> = {}) =>
    new LegacyTesseraClient({ legacyBaseUrl: tessera.legacyBaseUrl, apiId: account.apiid!, apiKey: account.apikey!, fetch: caFetch, ...options });

  it('uses expires_in_seconds from the answer (2 s here, not the documented 30 minutes) and re-authenticates after it', async () => {
    const mark = logMark();
    const client = legacyClient({ refreshSkewSeconds: 0 });
    const first = await client.getAccessToken();
    expect(await client.getAccessToken()).toBe(first);
    const account1 = await client.fetch('/v1/account');
    expect(account1.status).toBe(200);
    expect(await account1.json()).toMatchObject({ account_id: account.account_id });

    // Awaited, not slept for: the client hands out a new token once its 2 s have passed, and the
    // server refuses the first once its exp (whole seconds, so maybe a little later) has passed.
    // (A yes or no, so that a failure does not print a token.)
    await until(async () => (await client.getAccessToken()) !== first, 'a new token from the client after expires_in_seconds', { everyMs: 50 });
    const second = await client.getAccessToken();
    const probe = async () => (await tessera.request('/v1/account', { headers: { authorization: `bearer ${first}` }, legacy: true })).status;
    // The server no longer accepts the first token; a client counting 30 minutes would still send it.
    expect((await until(probe, 'the server refuses the first token', { done: (status) => status !== 200, everyMs: 50 })).answer).toBe(401);
    expect(second).not.toBe(first);
    const account2 = await client.fetch('/v1/account');
    expect(account2.status).toBe(200);

    const requests = await settledRequestsSince(tessera, mark);
    // Two authentications, and no /v1/account request was ever refused: the client knew when its token ran out.
    expect(requests.filter(to('/v1/authenticate'))).toHaveLength(2);
    expect(requests.filter((r) => r.url === '/v1/account' && r.status !== 200)).toHaveLength(1); // the test's own probe with the old token
    await client.close();
  });

  it('single flight: 200 concurrent callers cause one authenticate request', async () => {
    const mark = logMark();
    const client = legacyClient();
    const tokens = await Promise.all(Array.from({ length: 200 }, () => client.getAccessToken()));
    expect(new Set(tokens).size).toBe(1);
    expect((await settledRequestsSince(tessera, mark)).filter(to('/v1/authenticate'))).toHaveLength(1);
    await client.close();
  });
});

describe('errors have stable codes and never carry a secret', () => {
  /** A transport that answers token operations itself, echoing the request body back into a problem detail. */
  function answering(status: number, headers: Record<string, string> = {}, contentType = 'application/problem+json'): FetchLike {
    return async (input, init) => {
      if (new URL(String(input)).pathname.startsWith('/v5/Transaction') || String(input).includes('/forward-auth')) return caFetch(input, init);
      const echoed = typeof init?.body === 'string' ? init.body : '';
      const body = contentType.includes('json') ? JSON.stringify({ type: 'urn:test', title: 'Test', status, detail: `you sent ${echoed}` }) : `raw ${echoed}`;
      return new Response(body, { status, headers: { 'content-type': contentType, ...headers } });
    };
  }

  async function failure(operation: () => Promise<unknown>): Promise<TesseraError> {
    try {
      await operation();
    } catch (error) {
      expect(error).toBeInstanceOf(TesseraError);
      return error as TesseraError;
    }
    throw new Error('expected a failure');
  }

  function expectNoSecret(error: TesseraError, secrets: readonly string[]) {
    const texts = [error.message, String(error.stack), inspect(error, { depth: 10 }), JSON.stringify(error)];
    for (const secret of secrets) for (const text of texts) expect(text).not.toContain(secret);
  }

  it('each error code, forced, names no key and no token', async () => {
    const recorder = recording(caFetch);
    // A pair obtained first, so there are tokens in play to leak.
    const healthy = v5Client({ fetch: recorder.fetch });
    await healthy.getAccessToken();
    const pair = recorder.pairs.at(-1)!;
    const secrets = [account.transaction_key, account.apikey!, pair.token, pair.refresh_token];
    const wrongKey = `${account.transaction_key.slice(0, -4)}XXXX`;
    const closedPort = await freePort();
    const cases: { code: string; run: () => Promise<unknown>; check?: (error: TesseraError) => void; extraSecrets?: string[] }[] = [
      // Real server: wrong Transaction Key.
      { code: 'ERR_INVALID_CREDENTIALS', run: () => v5Client({ transactionKey: wrongKey }).getAccessToken(), extraSecrets: [wrongKey] },
      // Real server: wrong API Key on the older interface.
      {
        code: 'ERR_INVALID_CREDENTIALS',
        run: () => new LegacyTesseraClient({ legacyBaseUrl: tessera.legacyBaseUrl, apiId: account.apiid!, apiKey: wrongKey, fetch: caFetch }).getAccessToken(),
        extraSecrets: [wrongKey],
      },
      // Real server: a body over 16 KiB is a 413.
      { code: 'ERR_BAD_REQUEST', run: () => v5Client({ transactionKey: 'k'.repeat(20_000) }).getAccessToken(), check: (e) => expect(e.status).toBe(413), extraSecrets: ['k'.repeat(20_000)] },
      // Real socket: nothing listens there.
      {
        code: 'ERR_NETWORK',
        run: () => new TesseraClient({ baseUrl: `https://localhost:${closedPort}`, apiLoginId: account.api_login_id, transactionKey: account.transaction_key, fetch: caFetch }).getAccessToken(),
      },
      // The server has no rate limit and no way to fail on demand: these answers are made up, and echo the secret.
      {
        code: 'ERR_RATE_LIMITED',
        run: () => v5Client({ fetch: answering(429, { 'retry-after': '7' }) }).getAccessToken(),
        check: (e) => expect(e).toMatchObject({ retryAfterSeconds: 7, status: 429 }),
      },
      { code: 'ERR_SERVER', run: () => v5Client({ fetch: answering(503, { 'retry-after': '1' }) }).getAccessToken(), check: (e) => expect(e).toMatchObject({ retryAfterSeconds: 1 }) },
      { code: 'ERR_SERVER', run: () => v5Client({ fetch: answering(500) }).getAccessToken() },
      { code: 'ERR_BAD_REQUEST', run: () => v5Client({ fetch: answering(400) }).getAccessToken() },
      { code: 'ERR_BAD_REQUEST', run: () => v5Client({ fetch: answering(415) }).getAccessToken() },
      { code: 'ERR_FORBIDDEN', run: () => v5Client({ fetch: answering(403) }).getAccessToken() },
      { code: 'ERR_UNEXPECTED_RESPONSE', run: () => v5Client({ fetch: answering(200, {}, 'text/plain') }).getAccessToken() },
      { code: 'ERR_UNEXPECTED_RESPONSE', run: () => v5Client({ fetch: answering(200, {}, 'application/json') }).getAccessToken() },
      // close() with a refresh that can no longer be revoked because the server is unreachable mid-way.
      {
        code: 'ERR_SERVER',
        run: async () => {
          const client = v5Client({ fetch: async (input, init) => (String(input).endsWith('revoke-oauth-token') ? answering(502)(input, init) : caFetch(input, init)) });
          await client.getAccessToken();
          await client.close();
        },
      },
    ];
    for (const { code, run, check, extraSecrets = [] } of cases) {
      const error = await failure(run);
      expect(error.code, error.message).toBe(code);
      check?.(error);
      expectNoSecret(error, [...secrets, ...extraSecrets]);
    }
    await healthy.close();
  });

  it('a client shows no secret when logged', async () => {
    const client = v5Client();
    const legacy = new LegacyTesseraClient({ legacyBaseUrl: tessera.legacyBaseUrl, apiId: account.apiid!, apiKey: account.apikey!, fetch: caFetch });
    const token = await client.getAccessToken();
    const legacyToken = await legacy.getAccessToken();
    for (const text of [inspect(client, { depth: 10 }), JSON.stringify(client), inspect(legacy, { depth: 10 }), JSON.stringify(legacy)]) {
      for (const secret of [account.transaction_key, account.apikey!, token, legacyToken]) expect(text).not.toContain(secret);
    }
    await client.close();
    await legacy.close();
  });
});
