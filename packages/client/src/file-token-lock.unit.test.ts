import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FileTokenLock } from './file-token-lock.js';
import { systemTime } from './system-time.js';
import { TesseraClient } from './tessera-client.js';
import type { FetchLike } from './transport.js';

/**
 * Each refusal here is a way another local user could steer a client through a shared folder:
 * plant a token file with the victim's `owner` string and their own pair (the victim then works
 * as the planter's account), plant a lock (the victim fails or hangs), or point a name elsewhere
 * with a symbolic link. Real files in a temporary folder; files "of another user" are chowned,
 * which needs root, so those tests skip loudly without it.
 */
const isRoot = process.getuid?.() === 0;
const otherUser = 65_534; // nobody
const thirdUser = 65_533; // neither us nor nobody
if (!isRoot) console.warn('SKIPPING the FileTokenLock tests that plant files of another user: they chown files, which needs root.');

const baseUrl = 'https://tessera.example';
const apiLoginId = 'tsl_victim';
/** What TesseraClient writes as `owner` (base URL with its slash, and login id): no secret, so a planter knows it too. */
const victimOwner = `${baseUrl}/ ${apiLoginId}`;
const plantedPair = (owner: string) =>
  JSON.stringify({ version: 1, owner, token: 'planted-access-token', refresh_token: 'planted-refresh-token', obtained_at: systemTime(), expires_at: systemTime() + 3_600_000 });

let root: string;
let requests: number;
/** No request may leave: every refusal happens before the client talks to a server. */
const countingFetch: FetchLike = () => {
  requests += 1;
  return Promise.reject(new Error('no request was expected'));
};
const victimClient = (lock: FileTokenLock) => new TesseraClient({ baseUrl, apiLoginId, transactionKey: 'tsk_victim', fetch: countingFetch, lock });
const old = (path: string) => {
  const then = new Date(systemTime() - 600_000);
  utimesSync(path, then, then);
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-file-lock-'));
  requests = 0;
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('FileTokenLock in a private directory', () => {
  it('creates the missing directory 0700 and writes the lock and state as 0600 files of this user; a stale lock of its own is broken', async () => {
    const statePath = join(root, 'tokens', 'shop.json');
    const lock = new FileTokenLock({ statePath, staleAfterMs: 200, acquireTimeoutMs: 2000 });
    let lockMode = 0;
    await lock.withLock(async () => {
      lockMode = lstatSync(lock.lockPath).mode & 0o777;
      return { owner: victimOwner, token: 'a', refreshToken: 'r', obtainedAt: 0, expiresAt: 1 };
    });
    expect(lockMode).toBe(0o600);
    expect(lstatSync(join(root, 'tokens')).mode & 0o777).toBe(0o700);
    const state = lstatSync(statePath);
    expect(state.isFile()).toBe(true);
    expect(state.mode & 0o777).toBe(0o600);
    expect(state.uid).toBe(process.getuid?.());

    writeFileSync(lock.lockPath, '{"pid":0}'); // a crashed holder of our own
    old(lock.lockPath);
    await expect(lock.withLock(async (stored) => stored ?? null)).resolves.toMatchObject({ token: 'a' });
    expect(existsSync(lock.lockPath)).toBe(false);
  });
});

describe('FileTokenLock refuses a token file it cannot trust, by path and reason, and never reads it', () => {
  it.skipIf(!isRoot)("a token file owned by another user, holding the victim's owner string and the planter's pair", async () => {
    const statePath = join(root, 'shop.json');
    const planted = plantedPair(victimOwner);
    writeFileSync(statePath, planted, { mode: 0o600 });
    chownSync(statePath, otherUser, otherUser);
    const client = victimClient(new FileTokenLock({ statePath }));
    await expect(client.getAccessToken()).rejects.toMatchObject({
      name: 'UnsafeTokenFileError',
      code: 'ERR_UNSAFE_TOKEN_FILE',
      path: statePath,
      reason: expect.stringContaining(`owned by uid ${otherUser}`),
    });
    expect(requests).toBe(0);
    expect(readFileSync(statePath, 'utf8')).toBe(planted);
  });

  it.each(['0666', '0620', '0602'])('a token file of this user with mode %s (group or others may write it)', async (mode) => {
    const statePath = join(root, 'shop.json');
    const planted = plantedPair(victimOwner);
    writeFileSync(statePath, planted);
    chmodSync(statePath, Number.parseInt(mode, 8));
    const client = victimClient(new FileTokenLock({ statePath }));
    await expect(client.getAccessToken()).rejects.toMatchObject({ code: 'ERR_UNSAFE_TOKEN_FILE', path: statePath, reason: expect.stringMatching(/writable by group or others/) });
    expect(requests).toBe(0);
    expect(readFileSync(statePath, 'utf8')).toBe(planted);
  });

  it('a token file that is a symbolic link to a file elsewhere; the link and its target stay as they were', async () => {
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    const target = join(elsewhere, 'planted.json');
    const planted = plantedPair(victimOwner);
    writeFileSync(target, planted, { mode: 0o600 });
    const statePath = join(root, 'shop.json');
    symlinkSync(target, statePath);
    const client = victimClient(new FileTokenLock({ statePath }));
    await expect(client.getAccessToken()).rejects.toMatchObject({ code: 'ERR_UNSAFE_TOKEN_FILE', path: statePath, reason: expect.stringMatching(/symbolic link/) });
    expect(requests).toBe(0);
    expect(lstatSync(statePath).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe(planted);
  });

  it('a token file that is a FIFO is refused at once instead of blocking the read', async () => {
    const statePath = join(root, 'shop.json');
    execFileSync('mkfifo', ['-m', '600', statePath]);
    const lock = new FileTokenLock({ statePath });
    await expect(lock.withLock(async (stored) => stored ?? null)).rejects.toMatchObject({
      code: 'ERR_UNSAFE_TOKEN_FILE',
      path: statePath,
      reason: expect.stringMatching(/not a regular file/),
    });
  }, 5000);
});

describe('FileTokenLock refuses a lock file it cannot trust, by path and reason, and leaves it in place', () => {
  it.skipIf(!isRoot)('a stale lock planted by another user is neither broken nor read', async () => {
    const statePath = join(root, 'shop.json');
    const lock = new FileTokenLock({ statePath, staleAfterMs: 200, acquireTimeoutMs: 2000 });
    writeFileSync(lock.lockPath, '{"pid":1}', { mode: 0o600 });
    chownSync(lock.lockPath, otherUser, otherUser);
    old(lock.lockPath);
    await expect(lock.withLock(async (stored) => stored ?? null)).rejects.toMatchObject({
      name: 'UnsafeTokenFileError',
      code: 'ERR_UNSAFE_TOKEN_FILE',
      path: lock.lockPath,
      reason: expect.stringContaining(`owned by uid ${otherUser}`),
    });
    expect(lstatSync(lock.lockPath).uid).toBe(otherUser);
    expect(readFileSync(lock.lockPath, 'utf8')).toBe('{"pid":1}');
  });

  it('a lock of this user that group or others may write', async () => {
    const statePath = join(root, 'shop.json');
    const lock = new FileTokenLock({ statePath, staleAfterMs: 200, acquireTimeoutMs: 2000 });
    writeFileSync(lock.lockPath, '{"pid":1}');
    chmodSync(lock.lockPath, 0o666);
    old(lock.lockPath);
    await expect(lock.withLock(async (stored) => stored ?? null)).rejects.toMatchObject({
      code: 'ERR_UNSAFE_TOKEN_FILE',
      path: lock.lockPath,
      reason: expect.stringMatching(/writable by group or others/),
    });
    expect(existsSync(lock.lockPath)).toBe(true);
  });

  it('a lock that is a dangling symbolic link is refused instead of retried without pause', async () => {
    const statePath = join(root, 'shop.json');
    const lock = new FileTokenLock({ statePath, acquireTimeoutMs: 2000 });
    symlinkSync(join(root, 'nowhere'), lock.lockPath);
    await expect(lock.withLock(async (stored) => stored ?? null)).rejects.toMatchObject({
      code: 'ERR_UNSAFE_TOKEN_FILE',
      path: lock.lockPath,
      reason: expect.stringMatching(/symbolic link/),
    });
    expect(lstatSync(lock.lockPath).isSymbolicLink()).toBe(true);
  }, 5000);
});

describe('FileTokenLock refuses a directory others can use', () => {
  it.each([
    ['world-writable and sticky, like /tmp', 0o1777],
    ['group-writable', 0o770],
    ['readable by others', 0o755],
  ])('a directory of this user that is %s', async (_, mode) => {
    const shared = join(root, 'shared');
    mkdirSync(shared);
    chmodSync(shared, mode);
    const statePath = join(shared, 'shop.json');
    const lock = new FileTokenLock({ statePath });
    await expect(lock.withLock(async (stored) => stored ?? null)).rejects.toMatchObject({
      code: 'ERR_UNSAFE_TOKEN_FILE',
      path: shared,
      reason: expect.stringMatching(/group or others/),
    });
    expect(existsSync(lock.lockPath)).toBe(false);
  });

  it.skipIf(!isRoot)('a private directory owned by another user', async () => {
    const theirs = join(root, 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, otherUser, otherUser);
    const lock = new FileTokenLock({ statePath: join(theirs, 'shop.json') });
    await expect(lock.withLock(async (stored) => stored ?? null)).rejects.toMatchObject({
      code: 'ERR_UNSAFE_TOKEN_FILE',
      path: theirs,
      reason: expect.stringContaining(`owned by uid ${otherUser}`),
    });
  });

  it('a directory that is a symbolic link', async () => {
    const real = join(root, 'real');
    mkdirSync(real, { mode: 0o700 });
    const link = join(root, 'link');
    symlinkSync(real, link);
    const lock = new FileTokenLock({ statePath: join(link, 'shop.json') });
    await expect(lock.withLock(async (stored) => stored ?? null)).rejects.toMatchObject({ code: 'ERR_UNSAFE_TOKEN_FILE', path: link, reason: expect.stringMatching(/symbolic link/) });
  });
});

/**
 * The same checks in a process that is not root, as a victim usually is: root may rename and
 * unlink anything, so only an unprivileged process meets the EPERM a planted lock used to cause.
 */
describe.skipIf(!isRoot)('FileTokenLock in an unprivileged process (uid 65534)', () => {
  const run = promisify(execFile);
  // nobody must be able to read the client, and the repository may sit in a private folder (a
  // mktemp -d clone): its sources go, transpiled, to a folder of their own that nobody can read.
  // The client has no dependencies, so plain node runs them there.
  let clientDir = '';
  beforeAll(() => {
    clientDir = mkdtempSync(join(tmpdir(), 'tessera-client-as-nobody-'));
    chmodSync(clientDir, 0o755);
    for (const file of readdirSync(import.meta.dirname).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))) {
      const { outputText } = ts.transpileModule(readFileSync(join(import.meta.dirname, file), 'utf8'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
      writeFileSync(join(clientDir, file.replace(/\.ts$/, '.js')), outputText, { mode: 0o644 });
    }
  });
  afterAll(() => rmSync(clientDir, { recursive: true, force: true }));
  const script = () => `
const { FileTokenLock } = await import(${JSON.stringify(join(clientDir, 'index.js'))});
const lock = new FileTokenLock({ statePath: process.env.STATE, staleAfterMs: 200, acquireTimeoutMs: 2000 });
try {
  await lock.withLock(async (stored) => stored ?? null);
  console.log(JSON.stringify({ outcome: 'acquired' }));
} catch (error) {
  console.log(JSON.stringify({ outcome: 'refused', name: error.name, code: error.code, path: error.path, reason: error.reason }));
}`;
  const asNobody = async (statePath: string) => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script()], {
      cwd: clientDir,
      uid: otherUser,
      gid: otherUser,
      env: { PATH: process.env.PATH, STATE: statePath },
    });
    return JSON.parse(stdout) as Record<string, string>;
  };

  beforeEach(() => chmodSync(root, 0o755)); // nobody must reach the folders below

  it.each([
    // Made by root, like /tmp itself: breaking the planted lock used to fail with EPERM.
    ['root', 0, /owned by uid 0/],
    // Made by the victim for others to share: breaking the planted lock used to succeed.
    ['the victim', otherUser, /writable by group or others/],
  ])('a stale lock another user planted in a shared sticky directory made by %s: the directory is refused by name', async (_, directoryOwner, reason) => {
    const shared = join(root, 'shared');
    mkdirSync(shared);
    chownSync(shared, directoryOwner, directoryOwner);
    chmodSync(shared, 0o1777);
    const statePath = join(shared, 'shop.json');
    writeFileSync(`${statePath}.lock`, '{"pid":1}', { mode: 0o600 });
    chownSync(`${statePath}.lock`, thirdUser, thirdUser);
    old(`${statePath}.lock`);
    expect(await asNobody(statePath)).toEqual({ outcome: 'refused', name: 'UnsafeTokenFileError', code: 'ERR_UNSAFE_TOKEN_FILE', path: shared, reason: expect.stringMatching(reason) });
    expect(lstatSync(`${statePath}.lock`).uid).toBe(thirdUser);
  });

  it('a stale lock of another user in its own private directory is refused by name, not broken', async () => {
    const own = join(root, 'own');
    mkdirSync(own, { mode: 0o700 });
    chownSync(own, otherUser, otherUser);
    const statePath = join(own, 'shop.json');
    writeFileSync(`${statePath}.lock`, '{"pid":1}', { mode: 0o600 });
    chownSync(`${statePath}.lock`, thirdUser, thirdUser);
    old(`${statePath}.lock`);
    expect(await asNobody(statePath)).toMatchObject({ outcome: 'refused', code: 'ERR_UNSAFE_TOKEN_FILE', path: `${statePath}.lock` });
    expect(lstatSync(`${statePath}.lock`).uid).toBe(thirdUser);
  });

  it('its own private directory works', async () => {
    const own = join(root, 'own');
    mkdirSync(own, { mode: 0o700 });
    chownSync(own, otherUser, otherUser);
    expect(await asNobody(join(own, 'shop.json'))).toEqual({ outcome: 'acquired' });
  });
});
