import { execFile, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streams, type TesseraEvent, type TesseraEventType } from '@tessera/events';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { createHashingKey, createSecretHasher, newApiLoginId, newHashingKey, newTransactionKey, secretHashingKeyFingerprint } from '@tessera/tokens';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Secrets are stored only as keyed hashes, so a writer holding another secret-hashing key than
 * the log's writes hashes nothing can check. The log records its key's fingerprint; every writer
 * (the CLI's writing commands, `tessera start`, `tessera issuer`) is held to it before its first
 * append; `keys rotate-hashing` moves the log to a new key. All through the compiled CLI and real
 * servers, as a user runs them.
 */
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const cli = join(repositoryRoot, 'services', 'cli', 'bin', 'tessera.js');
const scratch = mkdtempSync(join(tmpdir(), 'tessera-hashing-key-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** This process's environment without any TESSERA_* variable, so each case says exactly which it sets. */
function cleanEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = { NODE_OPTIONS: '' };
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('TESSERA_') && name !== 'NODE_OPTIONS') clean[name] = value;
  return { ...clean, ...env };
}

interface CliAnswer {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI with exactly these TESSERA_* variables, from `cwd`; the exit code instead of a throw. */
const runCli = (args: string[], env: Record<string, string>, cwd = repositoryRoot) =>
  new Promise<CliAnswer>((done) => {
    execFile(process.execPath, [cli, ...args], { env: cleanEnv(env), cwd }, (error, stdout, stderr) =>
      done({ code: error ? Number((error as { code?: unknown }).code) : 0, stdout, stderr }),
    );
  });

/** `tessera start` expected to refuse: its exit code and stderr, or a kill after 20 s. */
async function startExpectingExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [cli, 'start'], {
    env: cleanEnv({ TESSERA_HOST: '127.0.0.1', TESSERA_PORT: '0', TESSERA_ADMIN_PORT: '0', ...env }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((exited) => child.once('exit', exited));
  clearTimeout(killer);
  return { code, stderr };
}

const lines = (text: string) => text.trim().split('\n');
const keyFile = (dataDir: string) => join(dataDir, 'keys', 'secret-hashing.key');
const fingerprintOf = (file: string) => secretHashingKeyFingerprint(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url'));
const logOf = (server: TesseraProcess) => `sqlite:${join(server.dataDir, 'events.db')}`;

/** The events of these types on a log file, oldest first. */
async function eventsOn(file: string, types: readonly TesseraEventType[]): Promise<TesseraEvent[]> {
  const store = new SqliteEventStore({ file });
  try {
    return (await store.readAll({ types })).map(({ event }) => event);
  } finally {
    await store.close();
  }
}

async function headOf(file: string): Promise<bigint | undefined> {
  const store = new SqliteEventStore({ file });
  try {
    return await store.headPosition();
  } finally {
    await store.close();
  }
}

const getToken = (server: TesseraProcess, account: Pick<Credentials, 'api_login_id' | 'transaction_key'>) =>
  server.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });

describe('a command pointed at a log with a data folder that is not the log\'s', () => {
  let server: TesseraProcess;
  beforeAll(async () => {
    server = await startTessera();
  });
  afterAll(async () => server?.stop());

  it('admin-tokens create with another data folder, against the server\'s log: exit 3, one line naming the key the log was written with; no key, no folder, no token', async () => {
    const other = join(scratch, 'other-admin');
    const answer = await runCli(['admin-tokens', 'create', '--name', 'x', '--scope', 'audit:read', '--json'], { TESSERA_DATA_DIR: other, TESSERA_EVENT_STORE: logOf(server) });
    expect(answer).toMatchObject({ code: 3, stdout: '' });
    expect(lines(answer.stderr)).toHaveLength(1);
    expect(answer.stderr).toContain(fingerprintOf(keyFile(server.dataDir)));
    expect(answer.stderr).toContain(`${keyFile(other)} does not exist`);
    expect(answer.stderr).toMatch(/TESSERA_DATA_DIR/);
    expect(existsSync(other)).toBe(false);
    const listed = JSON.parse((await server.tessera(['admin-tokens', 'list', '--json'])).stdout) as { name: string }[];
    expect(listed.map((row) => row.name)).not.toContain('x');
  });

  it('accounts create the same way: exit 3, one line, no key and no folder made, and no account on the log', async () => {
    const other = join(scratch, 'other-accounts');
    const answer = await runCli(['accounts', 'create', '--name', 'split', '--json'], { TESSERA_DATA_DIR: other, TESSERA_EVENT_STORE: logOf(server) });
    expect(answer).toMatchObject({ code: 3, stdout: '' });
    expect(lines(answer.stderr)).toHaveLength(1);
    expect(existsSync(other)).toBe(false);
    const listed = JSON.parse((await server.tessera(['accounts', 'list', '--json'])).stdout) as { name: string }[];
    expect(listed.map((row) => row.name)).not.toContain('split');
  });

  it('a data folder with a key of its own: exit 2, one line naming both keys; the log is unchanged', async () => {
    const own = join(scratch, 'own-key');
    createHashingKey(own);
    const head = await headOf(join(server.dataDir, 'events.db'));
    const answer = await runCli(['accounts', 'create', '--name', 'split', '--json'], { TESSERA_DATA_DIR: own, TESSERA_EVENT_STORE: logOf(server) });
    expect(answer).toMatchObject({ code: 2, stdout: '' });
    expect(lines(answer.stderr)).toHaveLength(1);
    expect(answer.stderr).toContain(fingerprintOf(keyFile(own)));
    expect(answer.stderr).toContain(fingerprintOf(keyFile(server.dataDir)));
    expect(await headOf(join(server.dataDir, 'events.db'))).toBe(head);
  });

  it.each([
    ['admin-tokens', 'revoke', '--id', 'no-such-token'],
    ['ssf-receivers', 'revoke', '--id', 'no-such-receiver'],
  ])('%s %s appends too: with that folder it is refused the same way', async (...args) => {
    const answer = await runCli(args, { TESSERA_DATA_DIR: join(scratch, 'own-key'), TESSERA_EVENT_STORE: logOf(server) });
    expect(answer.code).toBe(2);
    expect(lines(answer.stderr)).toHaveLength(1);
  });

  it('tessera start with that folder against the server\'s log: exit 1, one line; nothing written', async () => {
    const head = await headOf(join(server.dataDir, 'events.db'));
    const refused = await startExpectingExit({ TESSERA_DATA_DIR: join(scratch, 'own-key'), TESSERA_EVENT_STORE: logOf(server) });
    expect(refused.code).toBe(1);
    expect(lines(refused.stderr)).toEqual([expect.stringMatching(/^tessera: cannot start: .*secret-hashing key .* was written with key/)]);
    expect(await headOf(join(server.dataDir, 'events.db'))).toBe(head);
  });

  it('from a folder with no data folder, pointed at the server\'s log by TESSERA_EVENT_STORE: refused, and no ./data is made', async () => {
    const elsewhere = mkdtempSync(join(scratch, 'cwd-'));
    const answer = await runCli(['accounts', 'create', '--name', 'split'], { TESSERA_EVENT_STORE: logOf(server) }, elsewhere);
    expect(answer.code).toBe(3);
    expect(lines(answer.stderr)).toHaveLength(1);
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});

describe('the default data folder, ./data of the folder a command runs in', () => {
  it('accounts create from a folder with no log, on the defaults: exit 3, one line saying where to run it; nothing is made there', async () => {
    const elsewhere = mkdtempSync(join(scratch, 'docs-'));
    const answer = await runCli(['accounts', 'create', '--name', 's'], {}, elsewhere);
    expect(answer).toMatchObject({ code: 3, stdout: '' });
    expect(lines(answer.stderr)).toEqual([expect.stringMatching(/no Tessera data: \.?\/?data\/events\.db does not exist\. Run the command from the folder the server runs in/)]);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('a first command on a new log, with its data folder named, makes the log and the key and records it; the server started there later accepts the account', async () => {
    const dataDir = join(scratch, 'cli-first');
    const created = await runCli(['accounts', 'create', '--name', 'first', '--permission', 'transaction:charge', '--json'], { TESSERA_DATA_DIR: dataDir });
    expect(created.code).toBe(0);
    const account = JSON.parse(created.stdout) as Credentials;
    expect(await eventsOn(join(dataDir, 'events.db'), ['SecretHashingKeyRecorded'])).toEqual([expect.objectContaining({ fingerprint: fingerprintOf(keyFile(dataDir)) })]);
    const server = await startTessera({}, { dataDir });
    try {
      await expect.poll(async () => (await getToken(server, account)).status, { timeout: 2_000 }).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('a log written before Tessera recorded its secret-hashing key', () => {
  /** What an older release left: a key file, and an account whose hash names no key. */
  async function olderReleaseFolder(name: string, options: { keyFile: boolean }) {
    const dataDir = join(scratch, name);
    mkdirSync(join(dataDir, 'keys'), { recursive: true, mode: 0o700 });
    const key = newHashingKey();
    if (options.keyFile) {
      writeFileSync(keyFile(dataDir), key.toString('base64url'), { mode: 0o600 });
      chmodSync(keyFile(dataDir), 0o600);
    }
    const account = { account_id: `acct_${name}`, api_login_id: newApiLoginId(), transaction_key: newTransactionKey() };
    const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
    try {
      const at = Math.floor(Date.now() / 1000);
      await store.append(
        streams.account(account.account_id),
        [
          { event: { type: 'AccountRegistered', v: 1, accountId: account.account_id, name: 'Old shop', permissions: ['transaction:charge'], at } },
          {
            event: {
              type: 'ApiCredentialIssued',
              v: 1,
              accountId: account.account_id,
              credentialId: `cred_${name}`,
              apiLoginId: account.api_login_id,
              transactionKeyHash: createSecretHasher(key).hash(account.transaction_key),
              at,
            },
          },
        ],
        { expectedRevision: 'no_stream' },
      );
    } finally {
      await store.close();
    }
    return { dataDir, account, fingerprint: secretHashingKeyFingerprint(key) };
  }

  it('the CLI refuses (one line: start the server once) and writes nothing; the server records its key at start; then the CLI works and old and new accounts authenticate', async () => {
    const { dataDir, account, fingerprint } = await olderReleaseFolder('upgraded', { keyFile: true });
    const log = join(dataDir, 'events.db');
    const head = await headOf(log);
    const refused = await runCli(['accounts', 'create', '--name', 'too early'], { TESSERA_DATA_DIR: dataDir });
    expect(refused.code).toBe(1);
    expect(lines(refused.stderr)).toEqual([expect.stringMatching(/was written before Tessera recorded .* start its server \(tessera start or tessera issuer\) once/)]);
    expect(await headOf(log)).toBe(head);
    const server = await startTessera({}, { dataDir });
    try {
      expect(await eventsOn(log, ['SecretHashingKeyRecorded'])).toEqual([expect.objectContaining({ fingerprint })]);
      expect((await getToken(server, account)).status).toBe(200);
      const created = await runCli(['accounts', 'create', '--name', 'after', '--json'], { TESSERA_DATA_DIR: dataDir });
      expect(created.code).toBe(0);
      await expect.poll(async () => (await getToken(server, JSON.parse(created.stdout) as Credentials)).status, { timeout: 2_000 }).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it('tessera start on such a log without its key file: exit 1, one line, and no key is made for it', async () => {
    const { dataDir } = await olderReleaseFolder('keyless', { keyFile: false });
    const refused = await startExpectingExit({ TESSERA_DATA_DIR: dataDir });
    expect(refused.code).toBe(1);
    expect(lines(refused.stderr)).toEqual([expect.stringMatching(/^tessera: cannot start: .*records no secret-hashing key, and .*secret-hashing\.key does not exist/)]);
    expect(existsSync(keyFile(dataDir))).toBe(false);
  });
});

interface RotationReport {
  readonly fingerprint: string;
  readonly previous_fingerprint: string;
  readonly file: string;
  readonly retired_keys: {
    fingerprint: string;
    file: string;
    transaction_keys: number;
    api_keys: number;
    refresh_token_families: number;
    admin_tokens: number;
    ssf_receivers: number;
    ssf_push_headers: number;
  }[];
}

describe('tessera keys rotate-hashing', () => {
  let server: TesseraProcess;
  beforeAll(async () => {
    server = await startTessera();
  });
  afterAll(async () => server?.stop());

  it('old credentials, refresh tokens, admin tokens and Shared Signals receivers keep working; new hashes use the new key; the report counts what depends on the old one, and rotate-key lowers it', async () => {
    const log = join(server.dataDir, 'events.db');
    const before = fingerprintOf(keyFile(server.dataDir));
    // Each account is also exchanged once (createAccount waits for the server to accept it): one family each.
    const shop = await server.createAccount({ name: 'shop' });
    const legacy = await server.createAccount({ name: 'legacy', legacy: true });
    const admin = JSON.parse((await server.tessera(['admin-tokens', 'create', '--name', 'auditor', '--scope', 'audit:read', '--json'])).stdout) as { admin_token: string };
    const receiver = JSON.parse((await server.tessera(['ssf-receivers', 'create', '--name', 'partner', '--json'])).stdout) as { token: string };
    const pair = (await getToken(server, shop)).json() as { refresh_token: string };

    const { stdout } = await server.tessera(['keys', 'rotate-hashing', '--json']);
    const report = JSON.parse(stdout) as RotationReport;
    expect(report.previous_fingerprint).toBe(before);
    expect(report.fingerprint).not.toBe(before);
    expect(report.file).toBe(keyFile(server.dataDir));
    expect(report.retired_keys).toEqual([
      { fingerprint: before, file: join(server.dataDir, 'keys', `secret-hashing.${before}.key`), transaction_keys: 2, api_keys: 1, refresh_token_families: 3, admin_tokens: 1, ssf_receivers: 1, ssf_push_headers: 0 },
    ]);
    expect(fingerprintOf(keyFile(server.dataDir))).toBe(report.fingerprint);
    expect(statSync(join(server.dataDir, 'keys', `secret-hashing.${before}.key`)).mode & 0o777).toBe(0o600);
    for (const file of [keyFile(server.dataDir), report.retired_keys[0]!.file]) expect(stdout).not.toContain(readFileSync(file, 'utf8').trim());

    // Hashes made before the rotation are checked under the key that made them; once the server has
    // read the rotation (within a second), the families it makes are hashed under the new key.
    await expect
      .poll(
        async () => {
          expect((await getToken(server, shop)).status).toBe(200);
          return (await eventsOn(log, ['TokenIssued'])).at(-1);
        },
        { timeout: 2_000, interval: 200 },
      )
      .toMatchObject({ hashingKey: report.fingerprint });
    const refreshed = await server.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token });
    expect(refreshed.status).toBe(200);
    const v1 = await server.request('/v1/authenticate', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ apiid: legacy.apiid!, apikey: legacy.apikey! }).toString(),
    });
    expect(v1.status).toBe(200);
    expect((await server.adminRequest('/admin/v1/events?limit=1', { headers: { authorization: `Bearer ${admin.admin_token}` } })).status).toBe(200);
    expect((await server.request('/ssf/streams', { headers: { authorization: `Bearer ${receiver.token}` } })).status).toBe(200);

    // New hashes name the new key: the server's own (a refresh) and the CLI's (an account).
    const current = report.fingerprint;
    expect((await eventsOn(log, ['TokenRotated'])).at(-1)).toMatchObject({ type: 'TokenRotated', hashingKey: current });
    const newcomer = await server.createAccount({ name: 'newcomer' });
    const issued = (await eventsOn(log, ['ApiCredentialIssued'])).find((event) => event.type === 'ApiCredentialIssued' && event.apiLoginId === newcomer.api_login_id);
    expect(issued).toMatchObject({ hashingKey: current });

    // A credential rotated onto the new key no longer depends on the old one.
    await server.tessera(['accounts', 'rotate-key', '--account', shop.account_id]);
    const human = (await server.tessera(['keys', 'rotate-hashing'])).stdout;
    const aboutFirst = human.split('\n').find((line) => line.includes(before));
    expect(aboutFirst).toMatch(/still needed by 1 Transaction Key, 1 API Key, /);
    expect(human).toMatch(/^New secret-hashing key [A-Za-z0-9_-]{22} is current/);
  });
});

describe('a server whose data folder lacks the key the log rotated to', () => {
  let server: TesseraProcess;
  beforeAll(async () => {
    server = await startTessera();
  });
  afterAll(async () => server?.stop());

  it('is unready naming the file, answers 503 where a new hash is needed and writes nothing (revoke and v1 go on), until the key is copied there', async () => {
    const account = await server.createAccount({ name: 'fleet', legacy: true });
    const pair = (await getToken(server, account)).json() as { refresh_token: string };
    const toRevoke = (await getToken(server, account)).json() as { refresh_token: string };
    // Another host: its own data folder with a copy of the deployment's key, on the same log.
    const otherHost = join(scratch, 'other-host');
    mkdirSync(join(otherHost, 'keys'), { recursive: true, mode: 0o700 });
    copyFileSync(keyFile(server.dataDir), keyFile(otherHost));
    const rotation = await runCli(['keys', 'rotate-hashing', '--json'], { TESSERA_DATA_DIR: otherHost, TESSERA_EVENT_STORE: logOf(server) });
    expect(rotation.code).toBe(0);
    const next = (JSON.parse(rotation.stdout) as RotationReport).fingerprint;
    const expected = join(server.dataDir, 'keys', `secret-hashing.${next}.key`);

    await expect.poll(async () => (await server.request('/readyz')).status, { timeout: 3_000 }).toBe(503);
    expect(String((await server.request('/readyz')).json().detail)).toContain(expected);
    const log = join(server.dataDir, 'events.db');
    const head = await headOf(log);
    const refused = await getToken(server, account);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect((await server.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token })).status).toBe(503);
    expect(await headOf(log)).toBe(head);
    expect(server.logs()).toMatch(/the secret-hashing key the log rotated to is not in the data folder/);
    // What only checks a stored hash goes on: a revoke, and the v1 exchange (its token carries no hash).
    expect((await server.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: toRevoke.refresh_token })).status).toBe(200);
    const v1 = await server.request('/v1/authenticate', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ apiid: account.apiid!, apikey: account.apikey! }).toString(),
    });
    expect(v1.status).toBe(200);

    copyFileSync(keyFile(otherHost), expected);
    chmodSync(expected, 0o600);
    await expect.poll(async () => (await server.request('/readyz')).status, { timeout: 10_000, interval: 250 }).toBe(200);
    expect((await getToken(server, account)).status).toBe(200);
    expect((await eventsOn(log, ['TokenIssued'])).at(-1)).toMatchObject({ hashingKey: next });
    // The refresh token issued before the rotation still refreshes: its hash is checked under the retired key.
    expect((await server.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token })).status).toBe(200);
  });
});
