import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { liveSegments, readManifest } from '@tessera/archive';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * docs/operations.md's backup and restore, run as printed (its `backup-drill-test` blocks, with
 * bash, sqlite3 and the CLI) against an all-in-one serving a load of issuances and revocations that
 * archives as it goes (a hot window of seconds). Then the machine is lost (kill -9), the copy is
 * restored into a new folder and started: every operation acknowledged before the backup began is
 * there, the archive verifies, and no position is given twice. Also an older log restored beside a
 * newer archive, as a backup whose archive copy was taken later holds.
 */
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const env = { TESSERA_ACCESS_TOKEN_TTL: '2', TESSERA_REFRESH_TOKEN_TTL: '4', TESSERA_HOT_RETENTION: '3', TESSERA_ARCHIVE_INTERVAL: '1', TESSERA_CLOCK_SKEW: '0' };

interface Acknowledged {
  readonly family: string;
  readonly kind: 'TokenIssued' | 'TokenRevoked';
  readonly at: number;
}

function drillBlock(name: 'backup' | 'restore'): string {
  const doc = readFileSync(join(repositoryRoot, 'docs', 'operations.md'), 'utf8');
  const block = new RegExp(`<!-- backup-drill-test: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(doc)?.[1];
  if (block === undefined) throw new Error(`docs/operations.md has no backup-drill-test: ${name} block`);
  return block;
}

/** Runs a block of the drill as an operator pastes it: bash, in the repository, with its folders named. */
function runDrill(name: 'backup' | 'restore', folders: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile('bash', ['--norc', '--noprofile', '-euo', 'pipefail', '-c', drillBlock(name)], { cwd: repositoryRoot, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TESSERA_LOG_LEVEL: 'silent', ...folders } }, (error, stdout, stderr) =>
      done({ code: error ? Number((error as { code?: unknown }).code) : 0, stdout, stderr }),
    );
  });
}

const familyOf = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string }).fid;

/** Issuances and revocations, four at a time, until `until` settles: every 200 recorded with when it came. */
async function load(tessera: TesseraProcess, account: Credentials, acknowledged: Acknowledged[], until: Promise<unknown>): Promise<void> {
  let done = false;
  void until.finally(() => (done = true));
  const worker = async (n: number) => {
    for (let i = 0; !done; i += 1) {
      const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
      expect(answer.status).toBe(200);
      const body = answer.json() as { token: string; refresh_token: string };
      const family = familyOf(body.token);
      acknowledged.push({ family, kind: 'TokenIssued', at: Date.now() });
      if ((i + n) % 3 !== 0) continue;
      const revoke = await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: body.refresh_token });
      expect(revoke.status).toBe(200);
      acknowledged.push({ family, kind: 'TokenRevoked', at: Date.now() });
    }
  };
  await Promise.all([0, 1, 2, 3].map(worker));
}


const running: TesseraProcess[] = [];
const folders: string[] = [];
const folder = (name: string) => {
  const path = join(mkdtempSync(join(tmpdir(), `tessera-drill-${name}-`)), name);
  folders.push(join(path, '..'));
  return path;
};
let source: TesseraProcess;
let account: Credentials;
let adminToken: string;
const acknowledged: Acknowledged[] = [];
let backup: string;
let backupStartedAt: number;
let backupOutput: { code: number; stdout: string; stderr: string };
/** A second copy of the log alone, taken before the first backup's: restored beside the first backup's (newer) archive. */
let olderLog: string;

beforeAll(async () => {
  source = await startTessera(env, { keepData: true });
  running.push(source);
  account = await source.createAccount({ name: 'drill' });
  adminToken = (JSON.parse((await source.tessera(['admin-tokens', 'create', '--name', 'drill', '--scope', 'audit:read', '--json'])).stdout) as { admin_token: string }).admin_token;
  backup = folder('backup');
  olderLog = folder('older');
  const segments = async () => Number(/^tessera_archive_segments (\d+)$/m.exec((await source.adminRequest('/metrics')).text)?.[1] ?? 0);
  const outside = (async () => {
    // Families close after 4 s and leave the hot log 3 s later: by then the archive holds some.
    await vi.waitFor(async () => expect(await segments()).toBeGreaterThan(0), { timeout: 40_000, interval: 200 });
    const older = await new Promise<number>((done) =>
      execFile('bash', ['-c', `mkdir -m 700 "$OLDER" && sqlite3 "$DATA/events.db" ".backup '$OLDER/events.db'" && cp -pR "$DATA/keys" "$OLDER/keys"`], { env: { ...process.env, OLDER: olderLog, DATA: source.dataDir } }, (error) => done(error ? 1 : 0)),
    );
    expect(older).toBe(0);
    // Archiving goes on past the older copy before the backup proper.
    const before = await segments();
    await vi.waitFor(async () => expect(await segments()).toBeGreaterThan(before), { timeout: 40_000, interval: 200 });
    backupStartedAt = Date.now();
    backupOutput = await runDrill('backup', { DATA: source.dataDir, BACKUP: backup });
    // Work acknowledged after the backup: what losing the machine now costs.
    const after = acknowledged.length;
    await until(() => acknowledged.length > after + 20, 'twenty more acknowledged writes after the backup', { timeoutMs: 30_000, everyMs: 50 });
  })();
  await load(source, account, acknowledged, outside);
  await outside;
  // The machine is lost.
  source.signal('SIGKILL');
  await source.exited;
}, 180_000);

afterAll(async () => {
  for (const tessera of running.reverse()) await tessera.stop();
  for (const path of folders) rmSync(path, { recursive: true, force: true });
});

async function auditTrail(tessera: TesseraProcess): Promise<{ position: string; type: string; family_id: string | null }[]> {
  const rows: { position: string; type: string; family_id: string | null }[] = [];
  let cursor: string | null = null;
  // The audit index catches up after the process is ready (it is rebuilt on a restored folder): until then, 503 naming that.
  await vi.waitFor(
    async () => {
      const answer = await tessera.adminRequest('/admin/v1/events?limit=1', { headers: { authorization: `Bearer ${adminToken}` } });
      expect(answer.status, answer.text).toBe(200);
    },
    { timeout: 30_000, interval: 100 },
  );
  do {
    const answer = await tessera.adminRequest(`/admin/v1/events?type=TokenIssued&type=TokenRevoked&limit=1000${cursor === null ? '' : `&cursor=${cursor}`}`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(answer.status, answer.text).toBe(200);
    const body = answer.json() as { events: { position: string; type: string; family_id: string | null }[]; next_cursor: string | null };
    rows.push(...body.events);
    cursor = body.next_cursor;
  } while (cursor !== null);
  return rows;
}

async function restoreAndStart(name: string, copy: string): Promise<TesseraProcess> {
  const restore = folder(name);
  const restored = await runDrill('restore', { BACKUP: copy, RESTORE: restore });
  expect(restored.code, restored.stderr).toBe(0);
  const tessera = await startTessera(env, { keepData: true, dataDir: restore });
  running.push(tessera);
  return tessera;
}

describe("docs/operations.md's backup and restore, beside a serving all-in-one that archives", () => {
  it('the backup block runs as printed and checks its own copy: the log whole, the archive verified against it', () => {
    expect(backupOutput.code, backupOutput.stderr).toBe(0);
    expect(backupOutput.stdout).toMatch(/verified: \d+ manifest entries, \d+ segments .* against the pins of the event log/);
  });

  it('restored into a new folder, it starts, verifies, and holds every issuance and revocation acknowledged before the backup began', async () => {
    const tessera = await restoreAndStart('restore', backup);
    const rows = await auditTrail(tessera);
    const held = new Set(rows.map((row) => `${row.family_id} ${row.type}`));
    const before = acknowledged.filter((operation) => operation.at < backupStartedAt);
    const after = acknowledged.filter((operation) => operation.at >= backupStartedAt);
    const lost = before.filter((operation) => !held.has(`${operation.family} ${operation.kind}`));
    const lostAfter = after.filter((operation) => !held.has(`${operation.family} ${operation.kind}`));
    console.info(`[backup drill] acknowledged before the backup began: ${before.length}, lost ${lost.length}; after it began: ${after.length}, lost ${lostAfter.length} (the recovery point)`);
    expect(before.length).toBeGreaterThan(50);
    expect(lost).toEqual([]);
    expect(new Set(rows.map((row) => row.position)).size).toBe(rows.length);
    const verified = await tessera.tessera(['archive', 'verify', '--json']);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, pinned_by: 'the event log' });
    // And it serves.
    const issued = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(issued.status).toBe(200);
  });

  it('an older log beside the newer archive: it verifies, new events take positions past the archive\'s, and no position is counted twice', async () => {
    const copy = folder('mixed');
    const mixed = await new Promise<number>((done) =>
      execFile('bash', ['-c', `mkdir -m 700 "$MIXED" && cp -pR "$OLDER/." "$MIXED/" && cp -pR "$BACKUP/archive" "$MIXED/archive"`], { env: { ...process.env, MIXED: copy, OLDER: olderLog, BACKUP: backup } }, (error) => done(error ? 1 : 0)),
    );
    expect(mixed).toBe(0);
    const tessera = await restoreAndStart('restore-mixed', copy);
    const verified = await tessera.tessera(['archive', 'verify', '--json']);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, pinned_by: 'the event log' });
    const archivedThrough = Math.max(...liveSegments(readManifest(join(tessera.dataDir, 'archive'))).map(({ segment }) => Number(segment.max_position)));
    const issued = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(issued.status).toBe(200);
    const db = new Database(join(tessera.dataDir, 'events.db'), { readonly: true });
    const newest = db.prepare("SELECT MAX(position) FROM events WHERE type = 'TokenIssued'").pluck().get() as number;
    db.close();
    expect(newest).toBeGreaterThan(archivedThrough);
    const rows = await auditTrail(tessera);
    expect(new Set(rows.map((row) => row.position)).size).toBe(rows.length);
  });
});
