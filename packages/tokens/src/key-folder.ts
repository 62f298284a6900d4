import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownerOnlyFolder, writeExclusive } from './private-files.js';
import { parsePrivateJwk, type PrivateJwk } from './signing-key.js';
import { CodedError, InvalidArgument } from '@tessera/contracts';

/** A file in the keys folder named as a signing key that does not hold one: the server does not start on it. */
export class SigningKeyFileInvalid extends CodedError {
  readonly code = 'ERR_SIGNING_KEY_FILE_INVALID';
}

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
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      // Not the parser's message, nor it as the cause: V8 quotes the text around the fault, and this text is a private key.
      throw new SigningKeyFileInvalid(`${file} is not a signing key file: it is not valid JSON`);
    }
    return parsePrivateJwk(parsed);
  }

  /** Whether this folder holds the private half of `kid`: what `keys rotate` retires by default. */
  holds(kid: string): boolean {
    return existsSync(this.privateKeyFile(kid));
  }

  private privateKeyFile(kid: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(kid)) throw new InvalidArgument(`invalid key id ${JSON.stringify(kid)}: letters, digits, _ and - only`);
    return join(this.dir, `${kid}.jwk.json`);
  }
}

/**
 * The folder of this process's private signing keys: TESSERA_KEYS_DIR, or `keys/` in the data
 * folder. The secret-hashing key is not opened here: it is read (and made, on a new log only) by
 * the check every writer makes against the log (`readHashingKeys`).
 */
export function openSigningKeyFolder(dataDir: string, keysDir?: string): KeyFolder {
  return new KeyFolder(keysDir ?? join(dataDir, 'keys'));
}
