import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHashingKey, installHashingKey, keepHashingKey, newHashingKey, readHashingKeys, retiredHashingKeyFile, SecretHashingKeyMismatch } from './hashing-key-files.js';
import { KeyFolder, openSigningKeyFolder } from './key-folder.js';
import { secretHashingKeyFingerprint } from './secret-hasher.js';
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

const hashingKeyOf = (dir: string) => readHashingKeys(dir).inUse?.key;

describe('key folders', () => {
  it('keeps the hashing key and signing keys in 0600 files in a 0700 folder, and the first writer wins', async () => {
    createHashingKey(dataDir);
    const first = hashingKeyOf(dataDir)!;
    createHashingKey(dataDir);
    expect(hashingKeyOf(dataDir)!.equals(first)).toBe(true);
    expect(mode(join(dataDir, 'keys', 'secret-hashing.key'))).toBe(0o600);
    expect(mode(join(dataDir, 'keys'))).toBe(0o700);
    const signing = openSigningKeyFolder(dataDir);
    const generated = await generateSigningKey();
    signing.savePrivateKey(generated.kid, generated.privateJwk);
    expect(mode(join(dataDir, 'keys', `${generated.kid}.jwk.json`))).toBe(0o600);
    expect(new KeyFolder(join(dataDir, 'keys')).loadPrivateKey(generated.kid)).toEqual(generated.privateJwk);
    expect(signing.holds(generated.kid)).toBe(true);
  });

  it('reads a signing key file back byte for byte as node:crypto exported it, and refuses one that is not a P-256 private JWK without quoting it', async () => {
    const folder = new KeyFolder(join(dataDir, 'keys'));
    const generated = await generateSigningKey();
    folder.savePrivateKey(generated.kid, generated.privateJwk);
    const file = join(dataDir, 'keys', `${generated.kid}.jwk.json`);
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toEqual(['kty', 'x', 'y', 'crv', 'd']);
    expect(JSON.stringify(folder.loadPrivateKey(generated.kid))).toBe(readFileSync(file, 'utf8'));
    const secret = generated.privateJwk.d;
    writeFileSync(join(dataDir, 'keys', 'rsa.jwk.json'), JSON.stringify({ ...generated.privateJwk, kty: 'RSA', crv: undefined, d: secret }));
    let refusal: unknown;
    try {
      folder.loadPrivateKey('rsa');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(Error);
    expect(String(refusal)).not.toContain(secret);
  });

  it('refuses a signing key file that is not valid JSON (cut short, say) naming the file, and quotes nothing of it', async () => {
    const folder = new KeyFolder(join(dataDir, 'keys'));
    const generated = await generateSigningKey();
    const secret = generated.privateJwk.d;
    // Cut short inside the private key: the JSON parser's own message would quote the text around its fault.
    const text = JSON.stringify(generated.privateJwk);
    writeFileSync(join(dataDir, 'keys', 'cut.jwk.json'), text.slice(0, text.indexOf(secret) + 20));
    let refusal: unknown;
    try {
      folder.loadPrivateKey('cut');
    } catch (error) {
      refusal = error;
    }
    expect(String(refusal)).toContain('cut.jwk.json is not a signing key file');
    const told = `${String(refusal)} ${String((refusal as Error).cause ?? '')} ${(refusal as Error).stack ?? ''}`;
    expect(told).not.toContain(secret.slice(0, 12));
  });

  it('fsyncs each new key file before linking it into place, then its folder', async () => {
    createHashingKey(dataDir);
    const keysDir = join(dataDir, 'keys');
    expect(synced.paths).toHaveLength(2);
    expect(synced.paths[0]).toMatch(new RegExp(`^${keysDir}/secret-hashing\\.key\\..*\\.tmp$`));
    expect(synced.paths[1]).toBe(keysDir);
    synced.paths.length = 0;
    const generated = await generateSigningKey();
    openSigningKeyFolder(dataDir).savePrivateKey(generated.kid, generated.privateJwk);
    expect(synced.paths).toHaveLength(2);
    expect(synced.paths[0]).toContain(`${keysDir}/${generated.kid}.jwk.json.`);
    expect(synced.paths[1]).toBe(keysDir);
  });

  it('reading the hashing keys makes nothing where there are none', () => {
    const absent = join(dataDir, 'not-there');
    expect(readHashingKeys(absent)).toEqual({ inUse: undefined, byFingerprint: new Map() });
    expect(readHashingKeys(dataDir).inUse).toBeUndefined();
    expect(existsSync(absent)).toBe(false);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('tightens a key folder that an older release or an operator left open', () => {
    mkdirSync(join(dataDir, 'keys'), { mode: 0o755 });
    chmodSync(join(dataDir, 'keys'), 0o755);
    readHashingKeys(dataDir);
    expect(mode(join(dataDir, 'keys'))).toBe(0o700);
  });

  it('with TESSERA_KEYS_DIR, keeps signing keys there and the hashing key in the data folder', async () => {
    const keysDir = join(dataDir, 'issuer-b-keys');
    createHashingKey(dataDir);
    const signing = openSigningKeyFolder(dataDir, keysDir);
    expect(readHashingKeys(dataDir, keysDir).inUse?.file).toBe(join(dataDir, 'keys', 'secret-hashing.key'));
    const generated = await generateSigningKey();
    signing.savePrivateKey(generated.kid, generated.privateJwk);
    expect(mode(keysDir)).toBe(0o700);
    expect(mode(join(keysDir, `${generated.kid}.jwk.json`))).toBe(0o600);
    expect(new KeyFolder(join(dataDir, 'keys')).holds(generated.kid)).toBe(false);
  });

  it('refuses a different secret-hashing.key in TESSERA_KEYS_DIR, and accepts a copy of the one in use', () => {
    createHashingKey(dataDir);
    const keysDir = join(dataDir, 'elsewhere');
    mkdirSync(keysDir);
    writeFileSync(join(keysDir, 'secret-hashing.key'), Buffer.alloc(32, 7).toString('base64url'));
    expect(() => readHashingKeys(dataDir, keysDir)).toThrow(SecretHashingKeyMismatch);
    writeFileSync(join(keysDir, 'secret-hashing.key'), readFileSync(join(dataDir, 'keys', 'secret-hashing.key')));
    expect(() => readHashingKeys(dataDir, keysDir)).not.toThrow();
  });

  it('keeps a retired key as secret-hashing.<fingerprint>.key (0600) and puts a new one in secret-hashing.key in one step; every key is found by its fingerprint', () => {
    createHashingKey(dataDir);
    const retired = hashingKeyOf(dataDir)!;
    const retiredFingerprint = secretHashingKeyFingerprint(retired);
    const kept = keepHashingKey(dataDir, retired);
    expect(kept).toBe(retiredHashingKeyFile(dataDir, retiredFingerprint));
    expect(mode(kept)).toBe(0o600);
    const next = newHashingKey();
    synced.paths.length = 0;
    installHashingKey(dataDir, next);
    expect(synced.paths.at(-1)).toBe(join(dataDir, 'keys'));
    expect(mode(join(dataDir, 'keys', 'secret-hashing.key'))).toBe(0o600);
    const held = readHashingKeys(dataDir);
    expect(held.inUse?.fingerprint).toBe(secretHashingKeyFingerprint(next));
    expect([...held.byFingerprint.keys()].sort()).toEqual([retiredFingerprint, secretHashingKeyFingerprint(next)].sort());
    expect(held.byFingerprint.get(retiredFingerprint)?.key.equals(retired)).toBe(true);
    expect(readdirSync(join(dataDir, 'keys')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
