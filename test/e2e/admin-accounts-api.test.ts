import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Accounts over the admin API, with nothing but the network: `tessera start` as a user runs it,
 * given a bootstrap admin token file (TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE), then driven with HTTPS
 * requests and with the CLI pointed at the admin listener (TESSERA_ADMIN_URL), from a folder with
 * no Tessera data. No secret the API hands out ever reaches the server's own output.
 */
const run = promisify(execFile);
const cli = join(resolve(import.meta.dirname, '..', '..'), 'services', 'cli', 'bin', 'tessera.js');
let work = '';
let server: TesseraProcess;
let bootstrapToken = '';
let tokenFile = '';
/** Every secret an answer carried: none may appear in the server's logs. */
const secrets: string[] = [];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tessera-admin-accounts-'));
  bootstrapToken = randomBytes(32).toString('base64url');
  tokenFile = join(work, 'admin-token');
  writeFileSync(tokenFile, `${bootstrapToken}\n`, { mode: 0o600 });
  secrets.push(bootstrapToken);
  server = await startTessera({ TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE: tokenFile, TESSERA_ADMIN_BOOTSTRAP_SCOPES: 'accounts:read,accounts:write' });
});
afterAll(async () => {
  await server?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const admin = (method: string, path: string, body?: unknown, token = bootstrapToken) =>
  server.adminRequest(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const getToken = (api_login_id: string, transaction_key: string) => server.postJson('/v5/Authorization/get-oauth-token', { api_login_id, transaction_key });
const authenticateV1 = (apiid: string, apikey: string) =>
  server.request('/v1/authenticate', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ apiid, apikey }).toString() });
/** The remote CLI, run from a folder with no Tessera data: only the admin API can answer it. */
const remote = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [cli, 'accounts', ...args], {
    cwd: work,
    env: {
      PATH: process.env.PATH ?? '',
      TESSERA_DATA_DIR: join(work, 'no-data'),
      TESSERA_ADMIN_URL: server.adminUrl!,
      TESSERA_ADMIN_TOKEN_FILE: tokenFile,
      TESSERA_ADMIN_CA_FILE: join(server.dataDir, 'tls', 'self-signed.crt'),
      ...env,
    },
  });

describe('the bootstrap admin token', () => {
  it('is registered at start with the scopes given, and works once /readyz says ready', async () => {
    expect((await admin('GET', '/admin/v1/accounts')).status).toBe(200);
    // Scopes it was not given: 403 naming the scope.
    const outside = await admin('GET', '/admin/v1/events');
    expect(outside.status).toBe(403);
    expect(outside.headers['www-authenticate']).toContain('scope="audit:read"');
    expect(server.logs()).toContain('bootstrap admin token registered');
  });

  it('a bad file stops the start with one line and a non-zero exit', async () => {
    const short = join(work, 'short-token');
    writeFileSync(short, 'too-short\n');
    for (const file of [short, join(work, 'missing-token')]) {
      const dataDir = mkdtempSync(join(work, 'bad-start-'));
      const child = spawn(process.execPath, [cli, 'start'], {
        env: { ...process.env, TESSERA_DATA_DIR: dataDir, TESSERA_PORT: '0', TESSERA_ADMIN_PORT: '0', TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE: file },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await new Promise<number | null>((exited) => child.once('exit', exited));
      clearTimeout(killer);
      expect(code, stderr).not.toBe(0);
      expect(code, stderr).not.toBeNull();
      expect(stderr.trimEnd().split('\n'), stderr).toHaveLength(1);
      expect(stderr).toContain('TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE');
      expect(stderr).not.toContain('too-short');
    }
  });
});

describe('accounts over the admin API', () => {
  it('create, list a page at a time filtered by name, search, get; rotate: the old key is refused and the new one gets a token', async () => {
    const name = `Shop ${randomBytes(4).toString('hex')}`;
    const made = [];
    for (let index = 0; index < 3; index += 1) {
      const answer = await admin('POST', '/admin/v1/accounts', { name, permissions: ['transaction:charge'] });
      expect(answer.status).toBe(201);
      const created = answer.json() as { account_id: string; api_login_id: string; transaction_key: string };
      expect(Object.keys(created).sort()).toEqual(['account_id', 'api_login_id', 'transaction_key']);
      secrets.push(created.transaction_key);
      made.push(created);
    }
    await admin('POST', '/admin/v1/accounts', { name: 'Another shop', permissions: [] });

    const first = (await admin('GET', `/admin/v1/accounts?name=${encodeURIComponent(name)}&limit=2`)).json() as { accounts: { account_id: string }[]; next_cursor: string | null };
    expect(first.accounts.map((row) => row.account_id)).toEqual([made[0]!.account_id, made[1]!.account_id]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = (await admin('GET', `/admin/v1/accounts?name=${encodeURIComponent(name)}&limit=2&cursor=${first.next_cursor!}`)).json() as typeof first;
    expect(second.accounts.map((row) => row.account_id)).toEqual([made[2]!.account_id]);
    expect(second.next_cursor).toBeNull();
    // A search: any part of a name, an account id or an API Login ID, in any case.
    const searchedPart = name.slice(5).toUpperCase();
    const searched = (await admin('GET', `/admin/v1/accounts?q=${encodeURIComponent(searchedPart)}`)).json() as typeof first;
    expect(searched.accounts.map((row) => row.account_id)).toEqual(made.map((row) => row.account_id));
    const byLoginId = (await admin('GET', `/admin/v1/accounts?q=${made[1]!.api_login_id.toLowerCase()}`)).json() as typeof first;
    expect(byLoginId.accounts.map((row) => row.account_id)).toEqual([made[1]!.account_id]);
    expect((await admin('GET', '/admin/v1/accounts?q=')).status).toBe(400);
    expect((await admin('GET', '/admin/v1/accounts?limit=0')).status).toBe(400);
    expect((await admin('GET', '/admin/v1/accounts?cursor=not-a-cursor')).status).toBe(400);

    const one = await admin('GET', `/admin/v1/accounts/${made[0]!.account_id}`);
    expect(one.json()).toEqual({ account_id: made[0]!.account_id, name, permissions: ['transaction:charge'], api_login_ids: [made[0]!.api_login_id], legacy_api_ids: [], status: 'enabled' });
    expect((await admin('GET', '/admin/v1/accounts/no-such-account')).status).toBe(404);

    const account = made[0]!;
    expect((await getToken(account.api_login_id, account.transaction_key)).status).toBe(200);
    const rotated = await admin('POST', `/admin/v1/accounts/${account.account_id}/rotate-key`);
    expect(rotated.status).toBe(200);
    const newKey = (rotated.json() as { transaction_key: string }).transaction_key;
    secrets.push(newKey);
    expect(newKey).not.toBe(account.transaction_key);
    // The answer waits for this process to apply the rotation: no polling needed.
    expect((await getToken(account.api_login_id, account.transaction_key)).status).toBe(401);
    const token = await getToken(account.api_login_id, newKey);
    expect(token.status).toBe(200);
    expect(token.json().token).toEqual(expect.any(String));
  });

  it('permissions and legacy keys: the same rules as the CLI, bad input a 400 that changes nothing', async () => {
    const created = (await admin('POST', '/admin/v1/accounts', { name: 'Legacy shop', permissions: ['a:b'], legacy: true })).json() as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(['account_id', 'api_login_id', 'apiid', 'apikey', 'transaction_key']);
    secrets.push(created.transaction_key!, created.apikey!);
    const path = `/admin/v1/accounts/${created.account_id}`;

    const refused = await admin('PUT', `${path}/permissions`, { permissions: ['not a permission'] });
    expect(refused.status).toBe(400);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect((await admin('POST', '/admin/v1/accounts', { name: '   ', permissions: [] })).status).toBe(400);
    expect((await admin('GET', path)).json().permissions).toEqual(['a:b']);
    const set = await admin('PUT', `${path}/permissions`, { permissions: ['transaction:charge', 'transaction:refund'] });
    expect(set.json()).toEqual({ account_id: created.account_id, events: ['PermissionsChanged'] });
    expect((await admin('GET', path)).json().permissions).toEqual(['transaction:charge', 'transaction:refund']);
    expect((await admin('PUT', '/admin/v1/accounts/no-such-account/permissions', { permissions: [] })).status).toBe(404);

    expect((await authenticateV1(created.apiid!, created.apikey!)).status).toBe(200);
    const added = await admin('POST', `${path}/legacy-keys`);
    expect(added.status).toBe(201);
    const legacy = added.json() as { apiid: string; apikey: string };
    secrets.push(legacy.apikey);
    expect((await authenticateV1(legacy.apiid, legacy.apikey)).status).toBe(200);
    const revoked = await admin('POST', `${path}/legacy-keys/${created.apiid!}/revoke`);
    expect(revoked.status).toBe(200);
    expect((await authenticateV1(created.apiid!, created.apikey!)).status).toBe(401);
    expect((await authenticateV1(legacy.apiid, legacy.apikey)).status).toBe(200);
    expect((await admin('POST', `${path}/legacy-keys/tla_unknown/revoke`)).status).toBe(404);
    // Lists show identifiers, never a secret or a hash.
    const listed = (await admin('GET', `/admin/v1/accounts?name=${encodeURIComponent('Legacy shop')}`)).text;
    for (const secret of secrets) expect(listed).not.toContain(secret);
    expect(listed).not.toMatch(/hash/i);
  });

  it('the remote CLI: the same output and exit codes as on the data folder, from a folder with no data', async () => {
    const { stdout } = await remote(['create', '--name', 'CLI shop', '--permission', 'transaction:charge', '--json']);
    const created = JSON.parse(stdout) as { account_id: string; api_login_id: string; transaction_key: string };
    expect(Object.keys(created).sort()).toEqual(['account_id', 'api_login_id', 'transaction_key']);
    secrets.push(created.transaction_key);
    expect((await getToken(created.api_login_id, created.transaction_key)).status).toBe(200);

    const rows = JSON.parse((await remote(['list', '--json'])).stdout) as { account_id: string; name: string }[];
    expect(rows.find((row) => row.account_id === created.account_id)).toEqual({ account_id: created.account_id, name: 'CLI shop', permissions: ['transaction:charge'], api_login_ids: [created.api_login_id], legacy_api_ids: [], status: 'enabled' });
    const human = (await remote(['set-permissions', '--account', created.account_id, '--permission', 'transaction:refund'])).stdout;
    expect(human).toBe(`permissions of ${created.account_id} set to: transaction:refund\n`);
    const rotated = JSON.parse((await remote(['rotate-key', '--api-login-id', created.api_login_id, '--json'])).stdout) as { transaction_key: string };
    secrets.push(rotated.transaction_key);
    expect((await getToken(created.api_login_id, rotated.transaction_key)).status).toBe(200);

    // Disabled over the admin API: refused as a wrong key until enabled, and listed as such.
    const disabled = JSON.parse((await remote(['disable', '--account', created.account_id, '--reason', 'card testing', '--json'])).stdout) as Record<string, unknown>;
    expect(disabled).toMatchObject({ account_id: created.account_id, status: 'disabled', changed: true });
    expect((await getToken(created.api_login_id, rotated.transaction_key)).status).toBe(401);
    expect((await remote(['list'])).stdout).toContain(`${created.account_id}  CLI shop  DISABLED`);
    expect((await remote(['enable', '--account', created.account_id])).stdout).toBe(`${created.account_id} enabled: it gets new tokens again; tokens revoked when it was disabled stay revoked\n`);
    expect((await getToken(created.api_login_id, rotated.transaction_key)).status).toBe(200);
    await expect(remote(['enable', '--account', created.account_id, '--reason', 'x'])).rejects.toMatchObject({ code: 2 });
    await expect(remote(['disable', '--account', 'no-such-account'])).rejects.toMatchObject({ code: 3 });

    await expect(remote(['rotate-key', '--account', 'no-such-account'])).rejects.toMatchObject({ code: 3, stderr: 'tessera: no account no-such-account\n' });
    await expect(remote(['set-permissions', '--account', created.account_id, '--permission', 'not valid'])).rejects.toMatchObject({ code: 2 });
    await expect(remote(['set-permissions', '--account', created.account_id])).rejects.toMatchObject({ code: 2 });
    const wrongToken = join(work, 'wrong-token');
    writeFileSync(wrongToken, randomBytes(32).toString('base64url'));
    await expect(remote(['list'], { TESSERA_ADMIN_TOKEN_FILE: wrongToken })).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('401') });
    // The data folder it would otherwise open was never made.
    expect(readdirSync(work)).not.toContain('no-data');
  });

  it('a token without accounts:write may read but not change; none of the secrets handed out is in the server\'s output', async () => {
    const reader = randomBytes(32).toString('base64url');
    // An admin token with accounts:read only, made with the data-folder CLI beside the server.
    const made = JSON.parse((await server.tessera(['admin-tokens', 'create', '--name', 'reader', '--scope', 'accounts:read', '--json'])).stdout) as { admin_token: string };
    secrets.push(made.admin_token, reader);
    await expect.poll(async () => (await admin('GET', '/admin/v1/accounts', undefined, made.admin_token)).status, { timeout: 5_000 }).toBe(200);
    const refused = await admin('POST', '/admin/v1/accounts', { name: 'Not made', permissions: [] }, made.admin_token);
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toContain('scope="accounts:write"');
    expect((await admin('GET', `/admin/v1/accounts?name=${encodeURIComponent('Not made')}`)).json().accounts).toEqual([]);

    const logs = server.logs();
    expect(logs).toContain('/admin/v1/accounts');
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });
});
