import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/** The admin CLI against the data folder of a running server, as the README's Commands section documents it. */
let tessera: TesseraProcess;
beforeAll(async () => {
  tessera = await startTessera();
});
afterAll(async () => {
  await tessera?.stop();
});

const getToken = (api_login_id: string, transaction_key: string) =>
  tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id, transaction_key });
const charge = (token: string) => tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });

describe('tessera accounts', () => {
  it('create --json prints exactly account_id, api_login_id and transaction_key, accepted by the running server within 1 s', async () => {
    const { stdout } = await tessera.tessera(['accounts', 'create', '--name', 'Acme', '--permission', 'transaction:charge', '--json']);
    const created = JSON.parse(stdout) as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(['account_id', 'api_login_id', 'transaction_key']);
    // Paced: every 401 before the server has followed the CLI's write is charged to this
    // credential's failure budget (10 at this address), and a tight loop spends it in ~150 ms.
    await until(() => getToken(created.api_login_id!, created.transaction_key!), 'the server to accept the new account', {
      done: (answer) => answer.status === 200,
      timeoutMs: 1000,
      everyMs: 120,
    });
  });

  it('create without --json prints the secrets once, in human text', async () => {
    const { stdout } = await tessera.tessera(['accounts', 'create', '--name', 'Human']);
    expect(stdout).toMatch(/shown once/);
    expect(stdout).toMatch(/api_login_id\s+tsl_/);
    expect(stdout).toMatch(/transaction_key\s+tsk_/);
  });

  it('list shows accounts and never a secret', async () => {
    const account = await tessera.createAccount({ name: 'Listed' });
    const { stdout } = await tessera.tessera(['accounts', 'list', '--json']);
    const rows = JSON.parse(stdout) as { account_id: string; name: string; api_login_ids: string[] }[];
    expect(rows.find((r) => r.account_id === account.account_id)).toMatchObject({ name: 'Listed', api_login_ids: [account.api_login_id] });
    expect(stdout).not.toContain(account.transaction_key);
    const human = (await tessera.tessera(['accounts', 'list'])).stdout;
    expect(human).toContain(account.account_id);
    expect(human).not.toContain(account.transaction_key);
  });

  it('rotate-key prints a new key; the old one is refused from then on, and its refresh tokens too', async () => {
    const account = await tessera.createAccount();
    const before = (await getToken(account.api_login_id, account.transaction_key)).json() as { refresh_token: string };
    const { stdout } = await tessera.tessera(['accounts', 'rotate-key', '--account', account.account_id, '--json']);
    const rotated = JSON.parse(stdout) as { transaction_key: string; api_login_id: string };
    expect(rotated.api_login_id).toBe(account.api_login_id);
    expect(rotated.transaction_key).not.toBe(account.transaction_key);
    await expect.poll(async () => (await getToken(account.api_login_id, rotated.transaction_key)).status, { timeout: 1000 }).toBe(200);
    expect((await getToken(account.api_login_id, account.transaction_key)).status).toBe(401);
    // A family made with a rotated-away key cannot be renewed: rotation is how a leaked key is contained.
    expect((await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: before.refresh_token })).status).toBe(401);
  });

  it('set-permissions takes effect on the next token: 403 before, 200 after', async () => {
    const account = await tessera.createAccount({ permissions: [] });
    const first = (await getToken(account.api_login_id, account.transaction_key)).json() as { token: string; refresh_token: string };
    expect((await charge(first.token)).status).toBe(403);
    await tessera.tessera(['accounts', 'set-permissions', '--account', account.account_id, '--permission', 'transaction:charge']);
    await expect
      .poll(async () => {
        const pair = (await getToken(account.api_login_id, account.transaction_key)).json() as { token: string };
        return (await charge(pair.token)).status;
      }, { timeout: 1000 })
      .toBe(200);
    const refreshed = (await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: first.refresh_token })).json() as {
      token: string;
    };
    expect((await charge(refreshed.token)).status).toBe(200);
  });

  it('refuses bad input with a clear message and exit code 2', async () => {
    const failure = await tessera.tessera(['accounts', 'create']).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toMatch(/--name is required/);
    const badPermission = await tessera.tessera(['accounts', 'create', '--name', 'x', '--permission', 'has space']).catch((e: { code: number }) => e);
    expect(badPermission).toMatchObject({ code: 2 });
  });
});

describe('tessera keys rotate', () => {
  it('publishes a new key; tokens signed by the old one stay valid and its public key stays in the JWKS', async () => {
    const account = await tessera.createAccount();
    const old = (await getToken(account.api_login_id, account.transaction_key)).json() as { token: string };
    const oldKid = JSON.parse(Buffer.from(old.token.split('.')[0]!, 'base64url').toString()).kid as string;
    const { stdout } = await tessera.tessera(['keys', 'rotate', '--json']);
    const rotation = JSON.parse(stdout) as { kid: string; retired: string[] };
    expect(rotation.retired).toContain(oldKid);
    await expect
      .poll(async () => {
        const pair = (await getToken(account.api_login_id, account.transaction_key)).json() as { token: string };
        return JSON.parse(Buffer.from(pair.token.split('.')[0]!, 'base64url').toString()).kid as string;
      }, { timeout: 1000 })
      .toBe(rotation.kid);
    const jwks = (await tessera.request('/.well-known/jwks.json')).json() as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, rotation.kid]));
    expect((await charge(old.token)).status).toBe(200);
  });
});

describe('tessera audit', () => {
  it('lists an account\'s events with request ids and source addresses, filters by family and type, and shows no hash or secret', async () => {
    const account = await tessera.createAccount();
    const pair = (await getToken(account.api_login_id, account.transaction_key)).json() as { refresh_token: string; token: string };
    const fid = JSON.parse(Buffer.from(pair.token.split('.')[1]!, 'base64url').toString()).fid as string;
    await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token });
    const { stdout } = await tessera.tessera(['audit', '--account', account.account_id, '--json']);
    const rows = JSON.parse(stdout) as { type: string; request_id?: string; source_address?: string; stream: string; account_id: string }[];
    expect(rows.map((r) => r.type)).toEqual(expect.arrayContaining(['AccountRegistered', 'ApiCredentialIssued', 'TokenIssued', 'TokenRevoked']));
    expect(rows.every((r) => r.account_id === account.account_id)).toBe(true);
    const revoked = rows.find((r) => r.type === 'TokenRevoked')!;
    expect(revoked.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(revoked.source_address).toBe('127.0.0.1');
    for (const secret of [account.transaction_key, pair.refresh_token, pair.token]) expect(stdout).not.toContain(secret);
    expect(stdout).not.toMatch(/Hash"/);
    const family = JSON.parse((await tessera.tessera(['audit', '--family', fid, '--type', 'TokenRevoked', '--json'])).stdout) as { type: string }[];
    expect(family.map((r) => r.type)).toEqual(['TokenRevoked']);
    expect((await tessera.tessera(['audit', '--account', account.account_id])).stdout).toMatch(/TokenRevoked/);
  });
});

/** The CLI refuses what it cannot do safely, and its exit code says why. */
describe('CLI safety', () => {
  const cli = resolve(import.meta.dirname, '..', '..', 'services', 'cli', 'bin', 'tessera.js');
  /** The CLI with the server's environment, or another data folder; the exit code instead of a throw. */
  const runCli = (args: string[], env: NodeJS.ProcessEnv = tessera.env) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(process.execPath, [cli, ...args], { env }, (error, stdout, stderr) =>
        done({ code: error ? Number((error as { code?: unknown }).code) : 0, stdout, stderr }),
      );
    });
  const names = async () => (JSON.parse((await runCli(['accounts', 'list', '--json'])).stdout) as { name: string }[]).map((row) => row.name);

  it('create refuses a name with a control character (exit 2) and creates nothing', async () => {
    const refused = await runCli(['accounts', 'create', '--name', 'Evil\u001b[2J\u001b[31mShop']);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toMatch(/control character/);
    expect(await names()).not.toContain('Evil\u001b[2J\u001b[31mShop');
  });

  it('list prints a name with control characters written before they were refused as escapes, never raw', async () => {
    const oldName = 'Old\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eName\nfake line';
    const log = new SqliteEventStore({ file: join(tessera.dataDir, 'events.db') });
    try {
      await log.append('account-acct_old_escape', [{ event: { type: 'AccountRegistered', v: 1, accountId: 'acct_old_escape', name: oldName, permissions: [], at: 1_800_000_000 } }], {
        expectedRevision: 'no_stream',
      });
    } finally {
      await log.close();
    }
    const human = await runCli(['accounts', 'list']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('acct_old_escape  Old\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202eName\\x0afake line');
    expect(human.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    const json = await runCli(['accounts', 'list', '--json']);
    expect(json.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(await names()).toContain(oldName);
  });

  it('set-permissions with no --permission needs --none, which then removes every permission', async () => {
    const account = await tessera.createAccount({ permissions: ['transaction:charge'] });
    const permissionsOf = async () =>
      (JSON.parse((await runCli(['accounts', 'list', '--json'])).stdout) as { account_id: string; permissions: string[] }[]).find(
        (row) => row.account_id === account.account_id,
      )?.permissions;
    const bare = await runCli(['accounts', 'set-permissions', '--account', account.account_id]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/--none/);
    const both = await runCli(['accounts', 'set-permissions', '--account', account.account_id, '--none', '--permission', 'x']);
    expect(both.code).toBe(2);
    expect(await permissionsOf()).toEqual(['transaction:charge']);
    expect((await runCli(['accounts', 'set-permissions', '--account', account.account_id, '--none'])).code).toBe(0);
    expect(await permissionsOf()).toEqual([]);
  });

  it('set-audiences lets the OAuth 2.0 token endpoint issue for that resource (RFC 8707), and --none takes it back', async () => {
    const account = await tessera.createAccount({ permissions: ['transaction:charge'] });
    const resource = 'https://payments.example.test';
    const clientCredentials = () =>
      tessera.request('/oauth2/token', {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${account.api_login_id}:${account.transaction_key}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource }).toString(),
      });
    expect((await clientCredentials()).json()).toMatchObject({ error: 'invalid_target' });
    const set = JSON.parse((await tessera.tessera(['accounts', 'set-audiences', '--account', account.account_id, '--audience', resource, '--json'])).stdout) as Record<string, unknown>;
    expect(set).toMatchObject({ account_id: account.account_id, audiences: [resource], events: ['AccountAudiencesSet'] });
    await expect.poll(async () => (await clientCredentials()).status, { timeout: 1000 }).toBe(200);
    const aud = (JSON.parse(Buffer.from(((await clientCredentials()).json() as { access_token: string }).access_token.split('.')[1]!, 'base64url').toString()) as { aud: string }).aud;
    expect(aud).toBe(resource);
    const bad = await runCli(['accounts', 'set-audiences', '--account', account.account_id, '--audience', 'not a uri']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/absolute URI/);
    expect((await runCli(['accounts', 'set-audiences', '--account', account.account_id])).code).toBe(2);
    await tessera.tessera(['accounts', 'set-audiences', '--account', account.account_id, '--none']);
    await expect.poll(async () => (await clientCredentials()).status, { timeout: 1000 }).toBe(400);
  });

  it('set-client-keys registers public keys from a JWKS file, refuses a private key whole, and --none removes them', async () => {
    const account = await tessera.createAccount({ permissions: ['transaction:charge'] });
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const write = (name: string, jwks: unknown) => {
      const path = join(tessera.dataDir, name);
      writeFileSync(path, JSON.stringify(jwks));
      return path;
    };
    const publicFile = write('public-jwks.json', { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1' }] });
    const privateFile = write('private-jwks.json', { keys: [{ ...(await exportJWK(privateKey)), kid: 'k2' }] });
    const set = JSON.parse((await tessera.tessera(['accounts', 'set-client-keys', '--account', account.account_id, '--jwks-file', publicFile, '--json'])).stdout) as Record<string, unknown>;
    expect(set).toEqual({ account_id: account.account_id, kids: ['k1'], events: ['ClientKeysSet'] });
    const refused = await runCli(['accounts', 'set-client-keys', '--account', account.account_id, '--jwks-file', privateFile]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/private key members \(d\)/);
    expect(refused.stderr).not.toContain((await exportJWK(privateKey)).d!);
    expect((await runCli(['accounts', 'set-client-keys', '--account', account.account_id])).code).toBe(2);
    expect((await runCli(['accounts', 'set-client-keys', '--account', account.account_id, '--jwks-file', join(tessera.dataDir, 'absent.json')])).code).toBe(2);
    const none = JSON.parse((await tessera.tessera(['accounts', 'set-client-keys', '--account', account.account_id, '--none', '--json'])).stdout) as Record<string, unknown>;
    expect(none).toEqual({ account_id: account.account_id, kids: [], events: ['ClientKeysSet'] });
  });

  it('set-client-keys --jwks-url records an https URL; plain http only to a host TESSERA_EGRESS_ALLOW names; one source at a time', async () => {
    const account = await tessera.createAccount({ permissions: ['transaction:charge'] });
    const setUrl = (url: string, env?: NodeJS.ProcessEnv) => runCli(['accounts', 'set-client-keys', '--account', account.account_id, '--jwks-url', url, '--json'], env);
    const accepted = await setUrl('https://keys.example.test/tenant/jwks.json?v=2');
    expect(accepted.code).toBe(0);
    expect(JSON.parse(accepted.stdout)).toEqual({ account_id: account.account_id, jwks_url: 'https://keys.example.test/tenant/jwks.json?v=2', events: ['ClientKeysSet'] });
    const plain = await setUrl('http://127.0.0.1:9/jwks.json');
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/must be https/);
    // The same URL, with the host named in TESSERA_EGRESS_ALLOW (a developer's local server).
    expect((await setUrl('http://127.0.0.1:9/jwks.json', { ...tessera.env, TESSERA_EGRESS_ALLOW: '127.0.0.1' })).code).toBe(0);
    for (const [url, why] of [
      ['https://user:secret@keys.example.test/jwks.json', /credentials/],
      ['https://keys.example.test/jwks.json#k1', /fragment/],
      [`https://keys.example.test/${'a'.repeat(2048)}`, /at most 2048/],
      ['ftp://keys.example.test/jwks.json', /must be https/],
      ['not a url', /not a URL/],
    ] as const) {
      const refused = await setUrl(url);
      expect(refused.code, url).toBe(2);
      expect(refused.stderr, url).toMatch(why);
      // The refusal does not echo a URL that may carry a secret.
      expect(refused.stderr, url).not.toContain('secret@');
    }
    const both = await runCli(['accounts', 'set-client-keys', '--account', account.account_id, '--jwks-url', 'https://keys.example.test/jwks.json', '--none']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/one of --jwks-file, --jwks-url or --none/);
    const fileAndUrl = await runCli(['accounts', 'set-client-keys', '--account', account.account_id, '--jwks-url', 'https://keys.example.test/jwks.json', '--jwks-file', join(tessera.dataDir, 'public-jwks.json')]);
    expect(fileAndUrl.code).toBe(2);
  });

  it.each([
    ['accounts list', ['accounts', 'list']],
    ['accounts list --json', ['accounts', 'list', '--json']],
    ['audit', ['audit']],
  ])('%s on a folder with no Tessera data says so, exits 3, and creates no store and no hashing key', async (_what, args) => {
    const empty = mkdtempSync(join(tmpdir(), 'tessera-e2e-empty-'));
    const absent = join(empty, 'not-there');
    try {
      for (const dataDir of [empty, absent]) {
        const env: NodeJS.ProcessEnv = { ...tessera.env, TESSERA_DATA_DIR: dataDir };
        delete env.TESSERA_KEYS_DIR;
        delete env.TESSERA_EVENT_STORE;
        const answer = await runCli(args, env);
        expect(answer).toMatchObject({ code: 3, stdout: '' });
        expect(answer.stderr).toMatch(/no Tessera data/);
        expect(answer.stderr).toContain(join(dataDir, 'events.db'));
      }
      expect(readdirSync(empty)).toEqual([]);
      expect(existsSync(absent)).toBe(false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('a name that is not found exits 3, unlike a usage error (2)', async () => {
    const notFound = await runCli(['accounts', 'rotate-key', '--account', 'acct_nope']);
    expect(notFound.code).toBe(3);
    expect(notFound.stderr).toMatch(/no account acct_nope/);
    expect((await runCli(['accounts', 'rotate-key', '--api-login-id', 'tsl_nope'])).code).toBe(3);
    expect((await runCli(['accounts', 'set-permissions', '--account', 'acct_nope', '--none'])).code).toBe(3);
    expect((await runCli(['keys', 'rotate', '--kid', 'no-such-kid'])).code).toBe(3);
    expect((await runCli(['accounts', 'rotate-key'])).code).toBe(2);
  });

  it('a single-valued flag given twice is a usage error (exit 2), and nothing is created', async () => {
    const repeated = await runCli(['accounts', 'create', '--name', 'First', '--name', 'Second']);
    expect(repeated.code).toBe(2);
    expect(repeated.stderr).toMatch(/--name was given more than once/);
    expect(await names()).not.toContain('Second');
  });
});
