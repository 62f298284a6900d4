import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditIndex } from '@tessera/audit';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * The audit trail through the real CLI and server: `tessera audit` with the admin API's filters
 * and paging, `tessera audit access-at`, and the index the server keeps in its data folder. The
 * CLI's rows are compared with the running server's admin API: the machine and the API give the
 * same rows.
 */
let tessera: TesseraProcess;
let account: Credentials;
let familyId: string;
let revokedFamilyId: string;
let scratch: string;
const cli = resolve(import.meta.dirname, '..', '..', 'services', 'cli', 'bin', 'tessera.js');
const runCli = (args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(process.execPath, [cli, ...args], { env: tessera.env }, (error, stdout, stderr) => done({ code: error ? Number((error as { code?: unknown }).code) : 0, stdout, stderr }));
  });
const ndjson = (text: string) => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { fid: string; gen: number; jti: string };

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'tessera-e2e-audit-'));
  tessera = await startTessera();
  // The harness gets one token to see the account accepted: that family is the account's first.
  account = await tessera.createAccount({ legacy: true });
  const pair = (await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as { refresh_token: string };
  const refreshed = (await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token })).json() as { token: string };
  familyId = claims(refreshed.token).fid;
  const other = (await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as { refresh_token: string; token: string };
  revokedFamilyId = claims(other.token).fid;
  expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: other.refresh_token })).status).toBe(200);
  const form = new URLSearchParams({ apiid: account.apiid!, apikey: account.apikey! }).toString();
  expect((await tessera.request('/v1/authenticate', { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(200);
});
afterAll(async () => {
  await tessera?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('tessera audit', () => {
  it('--format ndjson prints the same rows, byte for byte, as GET /admin/v1/events with Accept: application/x-ndjson', async () => {
    const fromCli = await runCli(['audit', '--account', account.account_id, '--format', 'ndjson']);
    expect(fromCli).toMatchObject({ code: 0, stderr: '' });
    const { stdout } = await runCli(['admin-tokens', 'create', '--name', 'auditor', '--scope', 'audit:read', '--json']);
    const adminToken = (JSON.parse(stdout) as { admin_token: string }).admin_token;
    // The server's own index follows the log: once it reflects the head, it answers for the same log.
    await expect
      .poll(async () => {
        const metrics = (await tessera.adminRequest('/metrics')).text;
        const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1] ?? -1);
        return gauge('tessera_audit_index_position') >= gauge('tessera_event_store_head_position');
      }, { timeout: 10_000 })
      .toBe(true);
    const overHttp = await tessera.adminRequest(`/admin/v1/events?account=${account.account_id}`, { headers: { authorization: `Bearer ${adminToken}`, accept: 'application/x-ndjson' } });
    expect(overHttp.status).toBe(200);
    expect(fromCli.stdout).toBe(overHttp.text);
    const types = ndjson(fromCli.stdout).map((row) => row.type);
    expect(types).toEqual(['AccountRegistered', 'ApiCredentialIssued', 'LegacyCredentialIssued', 'TokenIssued', 'TokenIssued', 'TokenRotated', 'TokenIssued', 'TokenRevoked', 'LegacyTokenIssued']);
    expect(fromCli.stdout).not.toContain(account.transaction_key);
    expect(fromCli.stdout).not.toMatch(/Hash/);
  });

  it('filters by login, API ID, family and types, and pages with --limit and the --cursor it prints on stderr', async () => {
    const rows = async (args: string[]) => ndjson((await runCli(['audit', ...args, '--format', 'ndjson'])).stdout);
    expect((await rows(['--api-login-id', account.api_login_id])).map((row) => row.type)).toEqual(['ApiCredentialIssued', 'TokenIssued', 'TokenIssued', 'TokenRotated', 'TokenIssued', 'TokenRevoked']);
    expect((await rows(['--api-id', account.apiid!])).map((row) => row.type)).toEqual(['LegacyCredentialIssued', 'LegacyTokenIssued']);
    expect((await rows(['--family', familyId])).map((row) => [row.type, row.generation])).toEqual([['TokenIssued', 0], ['TokenRotated', 1]]);
    expect((await rows(['--account', account.account_id, '--type', 'TokenRevoked', '--type', 'TokenRotated'])).map((row) => row.type)).toEqual(['TokenRotated', 'TokenRevoked']);

    const first = await runCli(['audit', '--account', account.account_id, '--limit', '5', '--format', 'ndjson']);
    const cursor = /^next_cursor (\S+)$/m.exec(first.stderr)?.[1];
    expect(cursor).toBeDefined();
    const second = await runCli(['audit', '--account', account.account_id, '--limit', '5', '--cursor', cursor!, '--format', 'ndjson']);
    expect(second.stderr).toBe('');
    expect([...ndjson(first.stdout), ...ndjson(second.stdout)].map((row) => row.position)).toEqual(
      ndjson((await runCli(['audit', '--account', account.account_id, '--format', 'ndjson'])).stdout).map((row) => row.position),
    );

    const json = JSON.parse((await runCli(['audit', '--account', account.account_id, '--json'])).stdout) as { type: string }[];
    expect(json.map((row) => row.type)).toHaveLength(9);
    const table = (await runCli(['audit', '--account', account.account_id, '--limit', '2'])).stdout;
    expect(table).toContain(`AccountRegistered  account ${account.account_id}  request - `);
    expect(table).toMatch(/more events match: add --cursor \S+/);
  });

  it.each([
    [['--since', 'yesterday'], /--since must be an ISO 8601 time/],
    [['--limit', '5000'], /--limit must be a whole number from 1 to 1000/],
    [['--type', 'TokenMinted'], /--type unknown event type/],
    [['--format', 'xml'], /--format must be table or ndjson/],
    [['--cursor', 'nope'], /--cursor is not a cursor/],
    // Made as the server makes cursors, with a position no SQLite integer can hold.
    [['--cursor', Buffer.from('p1:9999999999999999999').toString('base64url')], /--cursor is not a cursor/],
  ])('%j is a usage error naming the flag (exit 2)', async (args, message) => {
    const refused = await runCli(['audit', ...args]);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toMatch(message);
  });
});

describe('tessera audit access-at', () => {
  it('names the families and the v1 token usable now (not the revoked one), and nothing before the account had a token', async () => {
    const now = await runCli(['audit', 'access-at', '--account', account.account_id, '--at', new Date().toISOString(), '--json']);
    expect(now.code).toBe(0);
    const answer = JSON.parse(now.stdout) as { families: { family_id: string; generation: number; credential_id: string }[]; legacy_tokens: unknown[]; log_position: string };
    const families = answer.families.map((family) => [family.family_id, family.generation]);
    expect(families).toHaveLength(2);
    expect(families).toContainEqual([familyId, 1]);
    expect(families.map(([id]) => id)).not.toContain(revokedFamilyId);
    expect(answer.legacy_tokens).toHaveLength(1);
    expect(answer.log_position).toMatch(/^\d+$/);
    const before = JSON.parse((await runCli(['audit', 'access-at', '--account', account.account_id, '--at', '2020-01-01T00:00:00Z', '--json'])).stdout) as { families: unknown[] };
    expect(before.families).toEqual([]);
    expect((await runCli(['audit', 'access-at', '--account', account.account_id, '--at', new Date().toISOString()])).stdout).toContain(`family ${familyId}  generation 1`);
  });

  it('an unknown account is exit 3; a missing or future --at is exit 2', async () => {
    expect(await runCli(['audit', 'access-at', '--account', 'acct_nobody', '--at', '2026-01-01T00:00:00Z'])).toMatchObject({ code: 3, stdout: '' });
    expect((await runCli(['audit', 'access-at', '--account', account.account_id])).code).toBe(2);
    const future = await runCli(['audit', 'access-at', '--account', account.account_id, '--at', '2999-01-01T00:00:00Z']);
    expect(future).toMatchObject({ code: 2 });
    expect(future.stderr).toMatch(/--at is in the future/);
  });
});

describe('the index the server keeps', () => {
  it('is audit-index.db in the data folder, 0600, and follows the log without the CLI', async () => {
    const file = join(tessera.dataDir, 'audit-index.db');
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    await tessera.createAccount();
    const log = new SqliteEventStore({ file: join(tessera.dataDir, 'events.db') });
    try {
      const head = await log.headPosition();
      // What the server wrote: the CLI, which would bring the index up to date itself, is not run here.
      await expect.poll(() => {
        const index = AuditIndex.open(file);
        try {
          return index.position();
        } finally {
          index.close();
        }
      }, { timeout: 2000 }).toBe(head);
    } finally {
      await log.close();
    }
  });
});
