import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../support/until.js';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/** Health, readiness, the start warning and SIGTERM draining. */
let tessera: TesseraProcess | undefined;
afterEach(async () => {
  await tessera?.stop();
  tessera = undefined;
});

describe('the all-in-one process', () => {
  it('serves /healthz and /readyz, and announces its development-only defaults in one warning line', async () => {
    tessera = await startTessera();
    expect((await tessera.request('/healthz')).status).toBe(200);
    expect((await tessera.request('/readyz')).json()).toEqual({ status: 'ready', ports: { public: Number(new URL(tessera.baseUrl).port), admin: Number(new URL(tessera.adminUrl!).port) } });
    const warnings = tessera
      .logs()
      .split('\n')
      .filter((line) => line.includes('"level":40'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/development-only/);
  });

  it('serves HTTPS only: plain HTTP on the port gets no answer', async () => {
    tessera = await startTessera();
    const plain = await fetch(tessera.baseUrl.replace('https:', 'http:') + '/healthz').then(
      (r) => r.status,
      () => 'refused',
    );
    expect(plain).not.toBe(200);
  });

  it('on SIGTERM finishes in-flight requests and exits 0; its data survives a restart', async () => {
    tessera = await startTessera({}, { keepData: true });
    const account = await tessera.createAccount();
    const inFlight = Array.from({ length: 20 }, () =>
      tessera!.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key }),
    );
    // Signal once the first answer is back, so the rest are in flight rather than not yet sent.
    await Promise.race(inFlight);
    tessera.signal('SIGTERM');
    const answers = await Promise.allSettled(inFlight);
    expect(await tessera.exited).toBe(0);
    const pairs = answers.flatMap((a) => (a.status === 'fulfilled' && a.value.status === 200 ? [a.value.json() as { refresh_token: string }] : []));
    expect(pairs.length).toBeGreaterThan(0);
    // Whatever was answered 200 is durable: every such refresh token still works after a restart.
    const dataDir = tessera.dataDir;
    tessera = await startTessera({}, { dataDir });
    for (const pair of pairs) {
      expect((await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token })).status).toBe(200);
    }
  });

  it('logs one line per request: token operations and refusals at info, allowed verifications only at debug', async () => {
    /** "level method url status" of the requests the server started handling at or after `since`. */
    const completedSince = (server: TesseraProcess, since: number) =>
      server
        .logs()
        .split('\n')
        .filter((line) => line.includes('"msg":"request completed"'))
        .map((line) => JSON.parse(line) as { level: number; time: number; responseTime: number; reqId: string; req: { method: string; url: string }; res: { statusCode: number } })
        .filter((entry) => entry.time - entry.responseTime >= since)
        // Every line names its request, so the refusal line logged by the error handler can be matched to it.
        .map((entry) => `${entry.level} ${entry.req.method} ${entry.req.url} ${entry.res.statusCode} ${/^[0-9a-f-]{36}$/.test(entry.reqId) ? 'with' : 'without'} reqId`);
    const walk = async (server: TesseraProcess) => {
      const account = await server.createAccount();
      const since = Date.now();
      const pair = (await server.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as {
        token: string;
      };
      await server.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${pair.token}` }, body: '{}' });
      await server.request('/v5/Transaction/charge', { method: 'POST', headers: { authorization: 'Bearer not-a-token' } });
      await server.request('/healthz');
      // A sentinel logged at info in every level: once its line is in, every line before it is too.
      await server.request('/lifecycle-sentinel');
      const sentinel = '30 GET /lifecycle-sentinel 404 with reqId';
      await until(() => completedSince(server, since).includes(sentinel), 'the sentinel request in the log');
      return completedSince(server, since).filter((line) => line !== sentinel);
    };

    tessera = await startTessera();
    expect(await walk(tessera)).toEqual(['30 POST /v5/Authorization/get-oauth-token 200 with reqId', '30 POST /v5/Transaction/charge 401 with reqId']);
    await tessera.stop();

    tessera = await startTessera({ TESSERA_LOG_LEVEL: 'debug' });
    expect(await walk(tessera)).toEqual([
      '30 POST /v5/Authorization/get-oauth-token 200 with reqId',
      '20 POST /v5/Transaction/charge 200 with reqId',
      '30 POST /v5/Transaction/charge 401 with reqId',
      '20 GET /healthz 200 with reqId',
    ]);
  });

  it('stops with a clear message naming the variable when the configuration is bad', async () => {
    await expect(startTessera({ TESSERA_ACCESS_TOKEN_TTL: 'soon' })).rejects.toThrow(/TESSERA_ACCESS_TOKEN_TTL/);
  });
});

describe('metrics', () => {
  it('serves Prometheus metrics on the admin listener with token outcomes, verifications and append latency', async () => {
    tessera = await startTessera();
    const account = await tessera.createAccount();
    await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: 'wrong' });
    const pair = (
      await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })
    ).json() as { token: string };
    await tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${pair.token}` }, body: '{}' });
    await tessera.request('/v5/Transaction/charge', { method: 'POST' });
    const answer = await tessera.adminRequest('/metrics');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/plain/);
    const line = (name: string) => Number(answer.text.match(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\d+(?:\\.\\d+)?)`, 'm'))?.[1] ?? NaN);
    // createAccount's acceptance probe issues one pair too, so at least two issues succeeded.
    expect(line('tessera_tokens_total{operation="issue",outcome="ok"}')).toBeGreaterThanOrEqual(2);
    // The probe may also have been refused once before the server saw the new account.
    expect(line('tessera_tokens_total{operation="issue",outcome="refused"}')).toBeGreaterThanOrEqual(1);
    expect(line('tessera_verifications_total{outcome="allowed"}')).toBe(1);
    expect(line('tessera_verifications_total{outcome="unauthorized"}')).toBe(1);
    expect(line('tessera_event_store_append_seconds_count')).toBeGreaterThanOrEqual(3);
    expect(line('tessera_ready')).toBe(1);
    expect(line('tessera_revocation_projection_entries')).toBe(0);
  });
});

describe('restart', () => {
  it('rebuilds the revocation projection from the log: revoked and rotated-away tokens stay refused', async () => {
    tessera = await startTessera({}, { keepData: true });
    const account = await tessera.createAccount();
    const get = async () =>
      (
        await tessera!.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })
      ).json() as { token: string; refresh_token: string };
    const revoked = await get();
    const rotated = await get();
    const live = await get();
    await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: revoked.refresh_token });
    const successor = (await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: rotated.refresh_token })).json() as {
      token: string;
    };
    const dataDir = tessera.dataDir;
    await tessera.stop();
    tessera = await startTessera({}, { dataDir });
    const charge = (token: string) => tessera!.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });
    expect((await charge(revoked.token)).status).toBe(401);
    expect((await charge(rotated.token)).status).toBe(401);
    expect((await charge(successor.token)).status).toBe(200);
    expect((await charge(live.token)).status).toBe(200);
  });
});

describe('kill -9 under load', () => {
  it('every pair answered 200 before the kill is still refreshable after a restart', async () => {
    tessera = await startTessera({}, { keepData: true });
    const account = await tessera.createAccount();
    const answered: { refresh_token: string }[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        try {
          const answer = await tessera!.postJson('/v5/Authorization/get-oauth-token', {
            api_login_id: account.api_login_id,
            transaction_key: account.transaction_key,
          });
          if (answer.status === 200) answered.push(answer.json() as { refresh_token: string });
        } catch {
          return; // the connection died with the process
        }
      }
    };
    const load = Array.from({ length: 16 }, worker);
    await new Promise((r) => setTimeout(r, 1500));
    tessera.signal('SIGKILL');
    await tessera.exited;
    stop = true;
    await Promise.all(load);
    expect(answered.length).toBeGreaterThan(50);
    const dataDir = tessera.dataDir;
    tessera = await startTessera({}, { dataDir });
    // In batches: one connection per pair at once would pass the cap on connections from one
    // address (TESSERA_MAX_CONNECTIONS_PER_ADDRESS, 256) and be refused at the door.
    const refreshed = [];
    for (let from = 0; from < answered.length; from += 100) {
      const batch = answered.slice(from, from + 100);
      refreshed.push(
        ...(await Promise.all(batch.map((pair) => tessera!.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token })))),
      );
    }
    expect(refreshed.filter((a) => a.status !== 200).map((a) => a.status)).toEqual([]);
  });
});
