import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * docs/operations.md's continuous backup with Litestream, run as printed (its `backup-drill-test:
 * litestream-*` blocks): replicating beside an all-in-one under a load of issuances and
 * revocations, then the server and Litestream killed together (the machine lost), the log
 * restored from the replica into a new folder and started. What the restore holds is measured
 * against what was acknowledged, and when.
 */
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const litestream = process.env.TESSERA_LITESTREAM ?? join(homedir(), '.cache', 'tessera', 'litestream-v0.3.14', 'litestream');
const available = existsSync(litestream);
if (!available) {
  const message = `Litestream not found at ${litestream} (build it with infra/litestream/build.sh, or name it with TESSERA_LITESTREAM)`;
  if (process.env.TESSERA_REQUIRE_LITESTREAM === '1') throw new Error(`TESSERA_REQUIRE_LITESTREAM=1: ${message}`);
  console.warn(`SKIPPING the Litestream drill: ${message}`);
}

function drillBlock(name: string): string {
  const doc = readFileSync(join(repositoryRoot, 'docs', 'operations.md'), 'utf8');
  const block = new RegExp(`<!-- backup-drill-test: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(doc)?.[1];
  if (block === undefined) throw new Error(`docs/operations.md has no backup-drill-test: ${name} block`);
  return block;
}

/** bash with Litestream on its PATH, as the operator's shell would have it. */
const shellEnv = (folders: Record<string, string>) => ({ PATH: `${join(litestream, '..')}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? '', ...folders });

interface Acknowledged {
  readonly family: string;
  readonly kind: 'TokenIssued' | 'TokenRevoked';
  readonly at: number;
}

const folders: string[] = [];
const folder = (name: string) => {
  const path = join(mkdtempSync(join(tmpdir(), `tessera-litestream-${name}-`)), name);
  folders.push(join(path, '..'));
  return path;
};
const running: TesseraProcess[] = [];
let replicating: ChildProcess | undefined;
const acknowledged: Acknowledged[] = [];
let killedAt: number;
let restored: TesseraProcess;
let account: Credentials;
let adminToken: string;

const familyOf = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string }).fid;

beforeAll(async () => {
  if (!available) return;
  const source = await startTessera({}, { keepData: true });
  running.push(source);
  account = await source.createAccount({ name: 'replicated' });
  adminToken = (JSON.parse((await source.tessera(['admin-tokens', 'create', '--name', 'drill', '--scope', 'audit:read', '--json'])).stdout) as { admin_token: string }).admin_token;
  const replica = folder('replica');
  const backup = folder('backup');
  // The keys, as the last periodic backup holds them (step 3 of the backup).
  await new Promise<void>((done, fail) => execFile('bash', ['-c', 'mkdir -m 700 "$BACKUP" && cp -pR "$DATA/keys" "$BACKUP/keys"'], { env: { ...process.env, BACKUP: backup, DATA: source.dataDir } }, (error) => (error ? fail(error) : done())));
  replicating = spawn('bash', ['--norc', '--noprofile', '-c', `exec ${drillBlock('litestream-replicate')}`], { env: shellEnv({ DATA: source.dataDir, REPLICA: replica }), stdio: 'ignore' });
  let stop = false;
  const worker = async (n: number) => {
    for (let i = 0; !stop; i += 1) {
      const answer = await source.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
      if (answer.status !== 200) return;
      const body = answer.json() as { token: string; refresh_token: string };
      acknowledged.push({ family: familyOf(body.token), kind: 'TokenIssued', at: Date.now() });
      if ((i + n) % 3 !== 0) continue;
      const revoke = await source.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: body.refresh_token });
      if (revoke.status !== 200) return;
      acknowledged.push({ family: familyOf(body.token), kind: 'TokenRevoked', at: Date.now() });
    }
  };
  const load = Promise.all([0, 1, 2, 3].map((n) => worker(n).catch(() => undefined)));
  // Several seconds of load, so that most of it has been replicated and some has not.
  await vi.waitFor(() => expect(acknowledged.length).toBeGreaterThan(1500), { timeout: 60_000, interval: 50 });
  // The machine is lost: the server and Litestream at the same moment.
  killedAt = Date.now();
  replicating.kill('SIGKILL');
  source.signal('SIGKILL');
  stop = true;
  await source.exited;
  await load;
  const restore = folder('restore');
  const result = await new Promise<{ code: number; stderr: string }>((done) =>
    execFile('bash', ['--norc', '--noprofile', '-euo', 'pipefail', '-c', drillBlock('litestream-restore')], { env: shellEnv({ REPLICA: replica, RESTORE: restore, BACKUP: backup }) }, (error, _stdout, stderr) =>
      done({ code: error ? Number((error as { code?: unknown }).code) : 0, stderr }),
    ),
  );
  expect(result.code, result.stderr).toBe(0);
  restored = await startTessera({}, { keepData: true, dataDir: restore });
  running.push(restored);
}, 180_000);

afterAll(async () => {
  replicating?.kill('SIGKILL');
  for (const tessera of running.reverse()) await tessera.stop();
  for (const path of folders) rmSync(path, { recursive: true, force: true });
});

describe.runIf(available)('continuous replication with Litestream, restored after the machine is lost', () => {
  it('holds every operation acknowledged more than two seconds before the loss; what it lost came in the last moments', async () => {
    await vi.waitFor(
      async () => expect((await restored.adminRequest('/admin/v1/events?limit=1', { headers: { authorization: `Bearer ${adminToken}` } })).status).toBe(200),
      { timeout: 30_000, interval: 100 },
    );
    const held = new Set<string>();
    let cursor: string | null = null;
    do {
      const answer = await restored.adminRequest(`/admin/v1/events?type=TokenIssued&type=TokenRevoked&limit=1000${cursor === null ? '' : `&cursor=${cursor}`}`, { headers: { authorization: `Bearer ${adminToken}` } });
      expect(answer.status, answer.text).toBe(200);
      const body = answer.json() as { events: { type: string; family_id: string }[]; next_cursor: string | null };
      for (const row of body.events) held.add(`${row.family_id} ${row.type}`);
      cursor = body.next_cursor;
    } while (cursor !== null);
    const lost = acknowledged.filter((operation) => !held.has(`${operation.family} ${operation.kind}`));
    const oldestLost = lost.length === 0 ? undefined : Math.min(...lost.map((operation) => operation.at));
    console.info(
      `[litestream] acknowledged ${acknowledged.length}; lost ${lost.length}` +
        (oldestLost === undefined ? '' : `, all acknowledged in the last ${killedAt - oldestLost} ms before the loss`),
    );
    expect(acknowledged.length).toBeGreaterThan(1500);
    expect(lost.filter((operation) => operation.at < killedAt - 2000)).toEqual([]);
    // And the restored server serves the replicated account.
    const issued = await restored.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(issued.status).toBe(200);
  });
});
