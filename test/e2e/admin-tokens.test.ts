import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * `tessera admin-tokens` through the real CLI, against the admin API of a running all-in-one on its
 * admin listener (HTTPS, TESSERA_ADMIN_PORT): a token the CLI makes works within a second, one it
 * revokes stops within a second, and operator revocation takes effect before the answer returns.
 */
const run = promisify(execFile);
const cli = join(resolve(import.meta.dirname, '..', '..'), 'services', 'cli', 'bin', 'tessera.js');
let server: TesseraProcess;
const tessera = (args: string[]) => server.tessera(args);
beforeAll(async () => {
  server = await startTessera();
});
afterAll(async () => {
  await server?.stop();
});
const env = () => ({ ...server.env, NODE_OPTIONS: '' });

const adminPost = (path: string, adminToken: string) => server.adminRequest(path, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` } });
/** An admin route that needs tokens:revoke: 404 once authenticated (no such family), 401/403 otherwise. */
const revokeUnknownFamily = async (adminToken: string) => (await adminPost('/admin/v1/families/no-such-family/revoke', adminToken)).status;
const withinASecond = { timeout: 1_000, interval: 20 };

describe('tessera admin-tokens', () => {
  it('list in a folder with no Tessera data is not found (exit 3), and creates nothing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'tessera-admin-tokens-empty-'));
    try {
      await expect(run(process.execPath, [cli, 'admin-tokens', 'list'], { env: { ...env(), TESSERA_DATA_DIR: empty } })).rejects.toMatchObject({ code: 3 });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('create --json prints exactly admin_token and id; the admin API accepts the token within a second, with its scope', async () => {
    const { stdout } = await tessera(['admin-tokens', 'create', '--name', 'ops', '--scope', 'tokens:revoke', '--json']);
    const created = JSON.parse(stdout) as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(['admin_token', 'id']);
    expect(created.admin_token).toMatch(/^tsa_/);
    await expect.poll(() => revokeUnknownFamily(created.admin_token!), withinASecond).toBe(404);
  });

  it('a token without the route\'s scope is 403; list shows id, name, scopes, created and revoked, never the token', async () => {
    const reader = JSON.parse((await tessera(['admin-tokens', 'create', '--name', 'auditor', '--scope', 'audit:read', '--json'])).stdout) as Record<string, string>;
    await expect.poll(() => revokeUnknownFamily(reader.admin_token!), withinASecond).toBe(403);
    const { stdout } = await tessera(['admin-tokens', 'list', '--json']);
    const rows = JSON.parse(stdout) as Record<string, unknown>[];
    expect(rows.find((row) => row.id === reader.id)).toEqual({ id: reader.id, name: 'auditor', scopes: ['audit:read'], created: expect.stringMatching(/^\d{4}-/), expires: null, revoked: null });
    expect(stdout).not.toContain(reader.admin_token);
    expect((await tessera(['admin-tokens', 'list'])).stdout).not.toContain(reader.admin_token);
  });

  it('revoke --id stops the token within a second (401), and list shows when', async () => {
    const created = JSON.parse((await tessera(['admin-tokens', 'create', '--name', 'leaving', '--scope', 'tokens:revoke', '--json'])).stdout) as Record<string, string>;
    await expect.poll(() => revokeUnknownFamily(created.admin_token!), withinASecond).toBe(404);
    const revoked = JSON.parse((await tessera(['admin-tokens', 'revoke', '--id', created.id!, '--json'])).stdout) as Record<string, unknown>;
    expect(revoked).toEqual({ id: created.id, revoked: expect.stringMatching(/^\d{4}-/), already_revoked: false });
    await expect.poll(() => revokeUnknownFamily(created.admin_token!), withinASecond).toBe(401);
    const rows = JSON.parse((await tessera(['admin-tokens', 'list', '--json'])).stdout) as Record<string, unknown>[];
    expect(rows.find((row) => row.id === created.id)?.revoked).toBe(revoked.revoked);
  });

  it('create --expires-in makes a token the admin API refuses once it has expired (401 invalid_token), and list shows when it expires', async () => {
    const { stdout } = await tessera(['admin-tokens', 'create', '--name', 'short-lived', '--scope', 'tokens:revoke', '--expires-in', '3', '--json']);
    const created = JSON.parse(stdout) as Record<string, string>;
    // The documented answer stays exactly these two fields; list says when the token expires.
    expect(Object.keys(created).sort()).toEqual(['admin_token', 'id']);
    const listed = (JSON.parse((await tessera(['admin-tokens', 'list', '--json'])).stdout) as Record<string, unknown>[]).find((row) => row.id === created.id);
    expect(listed).toMatchObject({ name: 'short-lived', revoked: null, expires: expect.stringMatching(/^\d{4}-.*Z$/) });
    const expiresAt = Date.parse(String(listed!.expires));
    expect(expiresAt - Date.parse(String(listed!.created))).toBe(3000);
    expect((await tessera(['admin-tokens', 'list'])).stdout).toMatch(new RegExp(`${created.id}  short-lived  tokens:revoke  created \\S+  expires ${String(listed!.expires).replaceAll('.', '\\.')}`));
    await expect.poll(() => revokeUnknownFamily(created.admin_token!), withinASecond).toBe(404);
    // Until the server refuses it (404 for the unknown family while the token is good): no sleep past expiresAt.
    const { answer: refused } = await until(() => adminPost('/admin/v1/families/no-such-family/revoke', created.admin_token!), 'the admin API refuses the expired token', { done: (answer) => answer.status !== 404, everyMs: 50 });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(refused.json()).toMatchObject({ type: 'urn:tessera:problem:invalid-token', detail: expect.stringMatching(/expired/) });
    // The list reads the CLI's own clock against the expiry to the millisecond: awaited as well.
    const expired = new RegExp(`${created.id}  .*  EXPIRED `);
    const { answer: listedLater } = await until(async () => (await tessera(['admin-tokens', 'list'])).stdout, 'the list shows the token EXPIRED', { done: (stdout) => expired.test(stdout) });
    expect(listedLater).toMatch(expired);
  });

  it('account revocation answers revoked_families over the admin listener, and the cut is in the log with the admin token\'s id', async () => {
    const admin = JSON.parse((await tessera(['admin-tokens', 'create', '--name', 'revoker', '--scope', 'tokens:revoke', '--json'])).stdout) as Record<string, string>;
    const account = await server.createAccount({ name: 'Shop' });
    const pair = (await server.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as {
      token: string;
    };
    const charge = async () => (await server.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${pair.token}` })).status;
    expect(await charge()).toBe(200);
    await expect.poll(async () => (await adminPost('/admin/v1/accounts/no-such-account/revoke-tokens', admin.admin_token!)).status, withinASecond).toBe(404);
    const answer = await adminPost(`/admin/v1/accounts/${account.account_id}/revoke-tokens`, admin.admin_token!);
    expect(answer.status).toBe(200);
    // Two: createAccount's own acceptance check got a pair too.
    expect(answer.json()).toEqual({ revoked_families: 2 });
    // Before the answer returned, this process's verifier already refused the account's tokens.
    expect(await charge()).toBe(401);
    const rows = JSON.parse((await tessera(['audit', '--account', account.account_id, '--type', 'AccountTokensRevoked', '--json'])).stdout) as { actor?: string }[];
    expect(rows.map((row) => row.actor)).toEqual([`admin:${admin.id}`]);
  });

  it('the admin API is on the admin listener only: the public port answers 404 for /admin/v1/*', async () => {
    const admin = JSON.parse((await tessera(['admin-tokens', 'create', '--name', 'nowhere', '--scope', 'tokens:revoke', '--json'])).stdout) as Record<string, string>;
    const publicAnswer = await server.request('/admin/v1/families/no-such-family/revoke', { method: 'POST', headers: { authorization: `Bearer ${admin.admin_token}` } });
    expect(publicAnswer.status).toBe(404);
  });

  it.each([
    // The exit code second: vitest fills the title's %i from the second column.
    ['an unknown scope', 2, ['admin-tokens', 'create', '--name', 'x', '--scope', 'admin:all']],
    ['no scope', 2, ['admin-tokens', 'create', '--name', 'x']],
    ['no name', 2, ['admin-tokens', 'create', '--scope', 'audit:read']],
    ['--expires-in 0', 2, ['admin-tokens', 'create', '--name', 'x', '--scope', 'audit:read', '--expires-in', '0']],
    ['--expires-in that is not a whole number of seconds', 2, ['admin-tokens', 'create', '--name', 'x', '--scope', 'audit:read', '--expires-in', '1h']],
    ['revoking an id that does not exist', 3, ['admin-tokens', 'revoke', '--id', 'no-such-token']],
  ])('%s exits %i with one line on stderr', async (_what, code, args) => {
    const refused = await tessera(args).then(
      () => undefined,
      (error: unknown) => error as { code: number; stderr: string; stdout: string },
    );
    expect(refused?.code).toBe(code);
    expect(refused?.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused?.stdout).toBe('');
  });
});
