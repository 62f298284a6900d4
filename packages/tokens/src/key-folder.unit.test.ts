import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeyFolder, SecretHashingKeyMismatch, openKeyFolders } from './key-folder.js';
import { generateSigningKey } from './signing-key.js';

/** Which paths were fsynced, in order: the fd each fsync got is traced back to the path opened. */
const synced = vi.hoisted(() => ({ paths: [] as string[] }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  const opened = new Map<number, string>();
  return {
    ...real,
    openSync: (path: string, ...rest: [string, number?]) => {
      const fd = real.openSync(path, ...rest);
      opened.set(fd, String(path));
      return fd;
    },
    fsyncSync: (fd: number) => {
      synced.paths.push(opened.get(fd) ?? `fd ${fd}`);
      real.fsyncSync(fd);
    },
  };
});

const mode = (path: string) => statSync(path).mode & 0o777;
let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-keys-'));
  synced.paths.length = 0;
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe('key folders', () => {
  it('keeps the hashing key and signing keys in 0600 files in a 0700 folder, and the first writer wins', async () => {
    const first = openKeyFolders(dataDir);
    expect(openKeyFolders(dataDir).hashingKey.equals(first.hashingKey)).toBe(true);
    expect(mode(join(dataDir, 'keys', 'secret-hashing.key'))).toBe(0o600);
    expect(mode(join(dataDir, 'keys'))).toBe(0o700);
    const generated = await generateSigningKey();
    first.signing.savePrivateKey(generated.kid, generated.privateJwk);
    expect(mode(join(dataDir, 'keys', `${generated.kid}.jwk.json`))).toBe(0o600);
    expect(new KeyFolder(join(dataDir, 'keys')).loadPrivateKey(generated.kid)).toEqual(generated.privateJwk);
    expect(first.signing.holds(generated.kid)).toBe(true);
  });

  it('fsyncs each new key file before linking it into place, then its folder', async () => {
    const { signing } = openKeyFolders(dataDir);
    const keysDir = join(dataDir, 'keys');
    expect(synced.paths).toHaveLength(2);
    expect(synced.paths[0]).toMatch(new RegExp(`^${keysDir}/secret-hashing\\.key\\..*\\.tmp$`));
    expect(synced.paths[1]).toBe(keysDir);
    synced.paths.length = 0;
    const generated = await generateSigningKey();
    signing.savePrivateKey(generated.kid, generated.privateJwk);
    expect(synced.paths).toHaveLength(2);
    expect(synced.paths[0]).toContain(`${keysDir}/${generated.kid}.jwk.json.`);
    expect(synced.paths[1]).toBe(keysDir);
  });

  it('tightens a key folder that an older release or an operator left open', () => {
    mkdirSync(join(dataDir, 'keys'), { mode: 0o755 });
    chmodSync(join(dataDir, 'keys'), 0o755);
    openKeyFolders(dataDir);
    expect(mode(join(dataDir, 'keys'))).toBe(0o700);
  });

  it('with TESSERA_KEYS_DIR, keeps signing keys there and the hashing key in the data folder', async () => {
    const keysDir = join(dataDir, 'issuer-b-keys');
    const { signing, hashingKey } = openKeyFolders(dataDir, keysDir);
    expect(hashingKey.equals(openKeyFolders(dataDir).hashingKey)).toBe(true);
    const generated = await generateSigningKey();
    signing.savePrivateKey(generated.kid, generated.privateJwk);
    expect(mode(keysDir)).toBe(0o700);
    expect(mode(join(keysDir, `${generated.kid}.jwk.json`))).toBe(0o600);
    expect(new KeyFolder(join(dataDir, 'keys')).holds(generated.kid)).toBe(false);
  });

  it('refuses a different secret-hashing.key in TESSERA_KEYS_DIR, and accepts a copy of the one in use', () => {
    const keysDir = join(dataDir, 'elsewhere');
    mkdirSync(keysDir);
    writeFileSync(join(keysDir, 'secret-hashing.key'), Buffer.alloc(32, 7).toString('base64url'));
    expect(() => openKeyFolders(dataDir, keysDir)).toThrow(SecretHashingKeyMismatch);
    writeFileSync(join(keysDir, 'secret-hashing.key'), readFileSync(join(dataDir, 'keys', 'secret-hashing.key')));
    expect(() => openKeyFolders(dataDir, keysDir)).not.toThrow();
  });
});
