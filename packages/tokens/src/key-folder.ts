import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { PrivateJwk } from './signing-key.js';

/**
 * Private signing keys, each a 0600 JWK file in a 0700 folder (TESSERA_KEYS_DIR, by default
 * `keys/` in the data folder). Files are created exclusively, so two processes starting at
 * once never overwrite each other's key.
 */
export class KeyFolder {
  constructor(readonly dir: string) {
    ownerOnlyFolder(dir);
  }

  savePrivateKey(kid: string, jwk: PrivateJwk): void {
    writeExclusive(this.privateKeyFile(kid), JSON.stringify(jwk));
  }

  loadPrivateKey(kid: string): PrivateJwk | undefined {
    const file = this.privateKeyFile(kid);
    if (!existsSync(file)) return undefined;
    return JSON.parse(readFileSync(file, 'utf8')) as PrivateJwk;
  }

  /** Whether this folder holds the private half of `kid`: what `keys rotate` retires by default. */
  holds(kid: string): boolean {
    return existsSync(this.privateKeyFile(kid));
  }

  private privateKeyFile(kid: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(kid)) throw new Error('invalid key id');
    return join(this.dir, `${kid}.jwk.json`);
  }
}

export class SecretHashingKeyMismatch extends Error {
  readonly code = 'ERR_SECRET_HASHING_KEY_MISMATCH';
  constructor(stray: string, inUse: string) {
    super(
      `${stray} differs from the secret-hashing key in use (${inUse}); TESSERA_KEYS_DIR holds signing keys only: ` +
        'remove that file, or put the deployment-wide key in the data folder',
    );
    this.name = 'SecretHashingKeyMismatch';
  }
}

/**
 * The key folders of one process. The secret-hashing key is always `<data dir>/keys/secret-hashing.key`,
 * whatever TESSERA_KEYS_DIR says: every issuer of a deployment must hash with the same key, so it
 * must not become per-issuer when signing keys are (docs/decisions/0008). A different
 * `secret-hashing.key` in TESSERA_KEYS_DIR would look like it is used and is not, so it stops the start.
 */
export function openKeyFolders(dataDir: string, keysDir?: string): { signing: KeyFolder; hashingKey: Buffer } {
  const hashingFolder = join(dataDir, 'keys');
  const hashingFile = join(hashingFolder, 'secret-hashing.key');
  ownerOnlyFolder(hashingFolder);
  writeExclusive(hashingFile, randomBytes(32).toString('base64url'));
  const inUse = readFileSync(hashingFile, 'utf8').trim();
  const signing = new KeyFolder(keysDir ?? hashingFolder);
  const stray = join(signing.dir, 'secret-hashing.key');
  if (resolve(signing.dir) !== resolve(hashingFolder) && existsSync(stray) && readFileSync(stray, 'utf8').trim() !== inUse) {
    throw new SecretHashingKeyMismatch(stray, hashingFile);
  }
  return { signing, hashingKey: Buffer.from(inUse, 'base64url') };
}

function ownerOnlyFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((statSync(dir).mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

/**
 * Write whole and fsync, link into place, then fsync the folder (as the relay checkpoint does):
 * a reader never sees a half-written key, the first writer wins, and a key that was used to sign
 * or hash is still there after a power cut.
 */
function writeExclusive(file: string, contents: string): void {
  if (existsSync(file)) return;
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(draft, 'wx', 0o600);
  try {
    writeSync(fd, contents);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  const folder = openSync(dirname(file), 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}
