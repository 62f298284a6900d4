import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * Other programs open the log while the server serves: Debian's `sqlite3` taking the online backups
 * docs/operations.md recommends (`.backup` and `VACUUM INTO`), and a Python script counting events. Each closes its connection
 * afterwards; if the server held no lock on `events.db` at that moment, that close checkpointed and
 * deleted the live `-wal`, and every later commit went to a deleted file: CLI-made accounts were
 * refused, and issuances and revocations that had answered 200 were gone after a `kill -9`.
 *
 * Here they run beside a load of issuances and revocations; afterwards a CLI-made account is served
 * within a second, everything that answered 200 survives `kill -9`, and the backup opens and holds
 * every event acknowledged before it began.
 */
const run = promisify(execFile);

interface Issued {
  readonly token: string;
  readonly refreshToken: string;
  readonly family: string;
  readonly acknowledgedAt: number;
}
interface Revoked extends Issued {
  readonly revokedAt: number;
}

const running: TesseraProcess[] = [];
let dataDir: string;
let account: Credentials;
const issued: Issued[] = [];
const revoked: Revoked[] = [];
let backupStartedAt: number;
let backupFile: string;
let vacuumStartedAt: number;
let vacuumFile: string;
const pythonCounts: number[] = [];

const familyOf = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string }).fid;

async function load(tessera: TesseraProcess, until: Promise<unknown>): Promise<void> {
  let done = false;
  void until.finally(() => (done = true));
  const worker = async (n: number) => {
    for (let i = 0; !done; i += 1) {
      const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
      expect(answer.status).toBe(200);
      const body = answer.json() as { token: string; refresh_token: string };
      const pair: Issued = { token: body.token, refreshToken: body.refresh_token, family: familyOf(body.token), acknowledgedAt: Date.now() };
      // Every third pair of each worker is revoked; the rest stay live.
      if ((i + n) % 3 !== 0) {
        issued.push(pair);
        continue;
      }
      const revoke = await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refreshToken });
      expect(revoke.status).toBe(200);
      revoked.push({ ...pair, revokedAt: Date.now() });
    }
  };
  await Promise.all([0, 1, 2, 3].map(worker));
}

beforeAll(async () => {
  const first = await startTessera({}, { keepData: true });
  running.push(first);
  dataDir = first.dataDir;
  account = await first.createAccount({ name: 'outside readers' });
  const log = join(dataDir, 'events.db');
  backupFile = join(dataDir, '..', `${dataDir.split('/').pop()}-backup.db`);
  vacuumFile = join(dataDir, '..', `${dataDir.split('/').pop()}-vacuum.db`);
  const outside = (async () => {
    // The load runs first for a while, so the log has a WAL full of commits the readers must not lose.
    await until(() => issued.length + revoked.length >= 60, 'sixty acknowledged writes', { timeoutMs: 60_000, everyMs: 20 });
    for (let round = 0; round < 3; round += 1) {
      const { stdout } = await run('python3', ['-c', 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute("SELECT COUNT(*) FROM events").fetchone()[0]); c.close()', log]);
      pythonCounts.push(Number(stdout.trim()));
    }
    backupStartedAt = Date.now();
    await run('sqlite3', [log, `.backup '${backupFile}'`]);
    vacuumStartedAt = Date.now();
    await run('sqlite3', [log, `VACUUM INTO '${vacuumFile}'`]);
    for (let round = 0; round < 2; round += 1) {
      const { stdout } = await run('python3', ['-c', 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute("SELECT COUNT(*) FROM events").fetchone()[0]); c.close()', log]);
      pythonCounts.push(Number(stdout.trim()));
    }
    // And the load goes on after the last reader closed: these commits too must reach the live WAL.
    const after = issued.length + revoked.length;
    await until(() => issued.length + revoked.length >= after + 60, 'sixty more acknowledged writes', { timeoutMs: 60_000, everyMs: 20 });
  })();
  await load(first, outside);
  await outside;
}, 120_000);

afterAll(async () => {
  for (const tessera of running.reverse()) await tessera.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(backupFile, { force: true });
  rmSync(vacuumFile, { force: true });
});

describe('an online backup and an outside reader beside a serving all-in-one', () => {
  it('a Python reader counts a log that only grows', () => {
    expect(pythonCounts.length).toBe(5);
    for (let i = 1; i < pythonCounts.length; i += 1) expect(pythonCounts[i]).toBeGreaterThanOrEqual(pythonCounts[i - 1]!);
  });

  it('an account made with the CLI afterwards is served within a second', async () => {
    // createAccount fails unless the running server accepts the new credentials within 1 s.
    await running[0]!.createAccount({ name: 'after the backup' });
  });

  it('an admin token made with the CLI afterwards is accepted within a second', async () => {
    const tessera = running[0]!;
    const { admin_token: token } = JSON.parse((await tessera.tessera(['admin-tokens', 'create', '--name', 'after the backup', '--scope', 'audit:read', '--json'])).stdout) as { admin_token: string };
    // The token is checked before anything else: a 401 is a token the server has not read (yet).
    const { answer } = await until(() => tessera.adminRequest('/admin/v1/events?limit=1', { headers: { authorization: `Bearer ${token}` } }), 'the new admin token to be read', {
      done: (answer) => answer.status !== 401,
      timeoutMs: 1000,
      everyMs: 50,
    });
    expect(answer.status).toBe(200);
  });

  for (const method of ['.backup', 'VACUUM INTO'] as const) {
    it(`the copy ${method} made opens whole and holds every issuance and revocation acknowledged before it began`, async () => {
      const [file, startedAt] = method === '.backup' ? [backupFile, backupStartedAt] : [vacuumFile, vacuumStartedAt];
      const { stdout: integrity } = await run('sqlite3', [file, 'PRAGMA integrity_check;']);
      expect(integrity.trim()).toBe('ok');
      const { stdout } = await run('sqlite3', ['-separator', ' ', file, "SELECT stream, type FROM events WHERE type IN ('TokenIssued', 'TokenRevoked');"]);
      const rows = new Set(stdout.trim().split('\n'));
      const issuedBefore = [...issued, ...revoked].filter((pair) => pair.acknowledgedAt < startedAt);
      const revokedBefore = revoked.filter((pair) => pair.revokedAt < startedAt);
      expect(issuedBefore.length).toBeGreaterThan(20);
      expect(revokedBefore.length).toBeGreaterThan(5);
      expect(issuedBefore.filter((pair) => !rows.has(`tokenfamily-${pair.family} TokenIssued`)).map((pair) => pair.family)).toEqual([]);
      expect(revokedBefore.filter((pair) => !rows.has(`tokenfamily-${pair.family} TokenRevoked`)).map((pair) => pair.family)).toEqual([]);
    });
  }

  it('after kill -9 and a restart, every revoked access token is refused and every live one accepted', async () => {
    const first = running[0]!;
    first.signal('SIGKILL');
    await first.exited;
    const restarted = await startTessera({}, { keepData: true, dataDir });
    running.push(restarted);
    const charge = (token: string) =>
      restarted.request('/v5/Transaction/charge', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    const wrong: string[] = [];
    for (const pair of revoked) if ((await charge(pair.token)).status !== 401) wrong.push(`revoked ${pair.family} accepted`);
    for (const pair of issued) if ((await charge(pair.token)).status !== 200) wrong.push(`issued ${pair.family} refused`);
    expect(revoked.length).toBeGreaterThan(30);
    expect(wrong).toEqual([]);
    // The refresh tokens of revoked families stay dead too.
    const refreshed = await restarted.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: revoked.at(-1)!.refreshToken });
    expect(refreshed.status).toBe(401);
  });
});
