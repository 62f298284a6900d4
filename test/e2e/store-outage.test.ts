import { execFile } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { freePort, startTessera, type HttpAnswer, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * A store that is unreachable or lost is an outage the process lives through:
 * it listens, /healthz is 200, /readyz is 503 naming the cause, token operations answer 503
 * problem+json with Retry-After, and it recovers without a restart.
 */
const run = promisify(execFile);
const cli = join(resolve(import.meta.dirname, '..', '..'), 'services', 'cli', 'bin', 'tessera.js');
let tessera: TesseraProcess | undefined;
afterEach(async () => {
  await tessera?.stop();
  tessera = undefined;
});

function expectOutageAnswer(answer: HttpAnswer): void {
  expect(answer.status).toBe(503);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
  expect(answer.json()).toMatchObject({ type: 'urn:tessera:problem:unavailable', status: 503 });
}

const getToken = (server: TesseraProcess, account: { api_login_id: string; transaction_key: string }) =>
  server.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });

describe('EventStoreDB with nothing listening', () => {
  it('the issuer starts and listens: /healthz 200, /readyz 503 naming the store, tokens 503 with Retry-After', async () => {
    // A port that takes each connection and closes it at once: no EventStoreDB answers, and the
    // count of connections shows the issuer trying again.
    let attempts = 0;
    const refuser = createServer((socket) => {
      attempts += 1;
      socket.destroy();
    });
    await new Promise<void>((listening) => refuser.listen(0, '127.0.0.1', listening));
    onTestFinished(() => new Promise<void>((closed) => refuser.close(() => closed())));
    const esdb = `esdb://127.0.0.1:${(refuser.address() as AddressInfo).port}?tls=false`;
    tessera = await startTessera({ TESSERA_EVENT_STORE: esdb }, { command: 'issuer', until: 'listening' });
    expect((await tessera.request('/healthz')).status).toBe(200);
    const ready = await tessera.request('/readyz');
    expectOutageAnswer(ready);
    expect(String(ready.json().detail)).toMatch(/event store unavailable: .*EventStoreDB unavailable/);
    expectOutageAnswer(await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: 'tsl_x', transaction_key: 'tsk_y' }));
    // Still alive three reconnection attempts later: the outage is waited out, not fatal.
    const seen = attempts;
    await until(() => attempts >= seen + 3, 'three more connection attempts to the store');
    expect((await tessera.request('/healthz')).status).toBe(200);
  });

  it('a CLI command pointed at it exits non-zero naming the outage, not a TypeError', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tessera-cli-esdb-'));
    const env = { ...process.env, TESSERA_DATA_DIR: dataDir, TESSERA_EVENT_STORE: `esdb://127.0.0.1:${await freePort()}?tls=false` };
    const failure = await run(process.execPath, [cli, 'accounts', 'list'], { env }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    rmSync(dataDir, { recursive: true, force: true });
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toMatch(/EventStoreUnavailable: EventStoreDB unavailable/);
    expect(failure?.stderr).not.toMatch(/TypeError/);
  });
});

describe('the embedded SQLite store', () => {
  it('a busy timeout (another writer holds the lock): 503 with Retry-After, then 200 once it lets go', async () => {
    tessera = await startTessera();
    const account = await tessera.createAccount();
    // A second connection holds the write lock longer than the 5 s busy timeout.
    const holder = new Database(join(tessera.dataDir, 'events.db'));
    holder.exec('BEGIN IMMEDIATE');
    try {
      expectOutageAnswer(await getToken(tessera, account));
      const ready = await tessera.request('/readyz');
      expect(ready.status).toBe(503);
      expect(String(ready.json().detail)).toMatch(/event store unavailable/);
      expect((await tessera.request('/healthz')).status).toBe(200);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    const { answer: recovered } = await until(() => getToken(tessera!, account), 'a token once the store is back', { done: (answer) => answer.status === 200 });
    expect(recovered.status).toBe(200);
    expect((await tessera.request('/readyz')).status).toBe(200);
  });

  it('a full disk: 503 with Retry-After (never 500), and 200 again once space returns, without a restart', async (context) => {
    if (process.getuid?.() !== 0) {
      console.warn('\n!!! full-disk e2e SKIPPED: mounting a small tmpfs needs root, and this run is not root.\n');
      context.skip();
    }
    const mountPoint = mkdtempSync(join(tmpdir(), 'tessera-full-disk-'));
    await run('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tessera-full-disk', mountPoint]);
    const dataDir = join(mountPoint, 'data');
    mkdirSync(dataDir);
    const filler = join(mountPoint, 'filler');
    try {
      tessera = await startTessera({}, { dataDir, keepData: true });
      const account = await tessera.createAccount();
      const before = await getToken(tessera, account);
      expect(before.status).toBe(200);

      fillDisk(filler);
      // Each answer is 200 (a durable append that still found room) or the outage's 503: never a 500.
      const answers: HttpAnswer[] = [];
      for (let i = 0; i < 50; i += 1) {
        const answer = await getToken(tessera, account);
        answers.push(answer);
        if (answer.status !== 200) break;
      }
      const refused = answers[answers.length - 1]!;
      expectOutageAnswer(refused);
      expect(answers.filter((answer) => answer.status !== 200 && answer.status !== 503)).toEqual([]);
      const ready = await tessera.request('/readyz');
      expect(ready.status).toBe(503);
      expect(String(ready.json().detail)).toMatch(/event store unavailable: .*(SQLITE_FULL|full)/i);

      rmSync(filler);
      const { answer: recovered } = await until(() => getToken(tessera!, account), 'a token once the store is back', { done: (answer) => answer.status === 200 });
      expect(recovered.status).toBe(200);
      expect((await tessera.request('/readyz')).status).toBe(200);
      // Whatever was answered 200, before and during the outage, was durable: it refreshes.
      for (const answer of [before, ...answers.filter((a) => a.status === 200)]) {
        const refreshed = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: answer.json().refresh_token });
        expect(refreshed.status).toBe(200);
      }
    } finally {
      await tessera?.stop();
      tessera = undefined;
      await run('umount', [mountPoint]).catch(() => undefined);
      rmdirSync(mountPoint);
    }
  });
});

/** Writes zeros until the file system says no. */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
  // The last partial page too.
  try {
    for (;;) writeSync(fd, Buffer.alloc(512));
  } catch {
    // ENOSPC: full.
  } finally {
    closeSync(fd);
  }
}
