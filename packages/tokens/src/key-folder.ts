import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PrivateJwk } from './signing-key.js';

/**
 * Secret material in the data folder, each file 0600 in a 0700 folder: the private signing
 * keys and the key that hashes stored secrets. Files are created exclusively, so two
 * processes starting at once never overwrite each other's key.
 */
export class KeyFolder {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'keys');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
  }

  /** The HMAC key for stored secrets, made on first use. */
  hashingKey(): Buffer {
    const file = join(this.dir, 'secret-hashing.key');
    writeExclusive(file, randomBytes(32).toString('base64url'));
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
  }

  savePrivateKey(kid: string, jwk: PrivateJwk): void {
    writeExclusive(this.privateKeyFile(kid), JSON.stringify(jwk));
  }

  loadPrivateKey(kid: string): PrivateJwk | undefined {
    const file = this.privateKeyFile(kid);
    if (!existsSync(file)) return undefined;
    return JSON.parse(readFileSync(file, 'utf8')) as PrivateJwk;
  }

  private privateKeyFile(kid: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(kid)) throw new Error('invalid key id');
    return join(this.dir, `${kid}.jwk.json`);
  }
}

/** Write whole, then link into place: a reader never sees a half-written key, and the first writer wins. */
function writeExclusive(file: string, contents: string): void {
  if (existsSync(file)) return;
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(draft, contents, { flag: 'wx', mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
}
