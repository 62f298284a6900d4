import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CodedError, errorCode } from '@tessera/contracts';
import { ownerOnlyFolder, tightenFolder, writeExclusive, writeReplacing } from './private-files.js';
import { secretHashingKeyFingerprint } from './secret-hasher.js';

/**
 * The secret-hashing keys on disk. The one new hashes are made with is always
 * `<data dir>/keys/secret-hashing.key`, whatever TESSERA_KEYS_DIR says: every issuer of a
 * deployment must hash with the same key, so it must not become per-issuer when signing keys are
 * (docs/decisions/0006). Keys retired by `keys rotate-hashing` stay beside it, read-only for
 * checking the hashes they made, as `secret-hashing.<fingerprint>.key`. Every file is 0600, base64url text.
 */
export interface HeldHashingKey {
  readonly fingerprint: string;
  readonly key: Buffer;
  readonly file: string;
}

export interface HeldHashingKeys {
  /** `<data dir>/keys/secret-hashing.key`, when it exists. */
  readonly inUse: HeldHashingKey | undefined;
  /** Every key file in `<data dir>/keys`, by the fingerprint of what it holds (whatever its name says). */
  readonly byFingerprint: ReadonlyMap<string, HeldHashingKey>;
}

export const hashingKeyFolder = (dataDir: string): string => join(dataDir, 'keys');
export const hashingKeyFile = (dataDir: string): string => join(hashingKeyFolder(dataDir), 'secret-hashing.key');
export const retiredHashingKeyFile = (dataDir: string, fingerprint: string): string => join(hashingKeyFolder(dataDir), `secret-hashing.${fingerprint}.key`);

const retiredName = /^secret-hashing\.[A-Za-z0-9_-]{22}\.key$/;

export class SecretHashingKeyMismatch extends CodedError {
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
 * The secret-hashing keys in the data folder, read without making anything: a command pointed at
 * the wrong folder must not leave a key behind. A different `secret-hashing.key` in TESSERA_KEYS_DIR
 * would look like it is used and is not, so it is refused.
 */
export function readHashingKeys(dataDir: string, keysDir?: string): HeldHashingKeys {
  const folder = hashingKeyFolder(dataDir);
  tightenFolder(folder);
  const byFingerprint = new Map<string, HeldHashingKey>();
  const names = existsSync(folder) ? readdirSync(folder).filter((name) => name === 'secret-hashing.key' || retiredName.test(name)) : [];
  let inUse: HeldHashingKey | undefined;
  for (const name of names.sort()) {
    const file = join(folder, name);
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
    if (key.length < 32) continue;
    const held = { fingerprint: secretHashingKeyFingerprint(key), key, file };
    if (name === 'secret-hashing.key') inUse = held;
    if (!byFingerprint.has(held.fingerprint) || name === 'secret-hashing.key') byFingerprint.set(held.fingerprint, held);
  }
  if (keysDir !== undefined && inUse !== undefined && resolve(keysDir) !== resolve(folder)) {
    const stray = join(keysDir, 'secret-hashing.key');
    if (existsSync(stray) && readFileSync(stray, 'utf8').trim() !== inUse.key.toString('base64url')) throw new SecretHashingKeyMismatch(stray, inUse.file);
  }
  return { inUse, byFingerprint };
}

/** A new random 32-byte key. */
export function newHashingKey(): Buffer {
  return randomBytes(32);
}

/**
 * Makes `<data dir>/keys/secret-hashing.key` if there is none (the first writer wins when two
 * start at once), in a 0700 folder. Only for a log that holds no secret yet: the check against
 * the log decides that.
 */
export function createHashingKey(dataDir: string): void {
  ownerOnlyFolder(hashingKeyFolder(dataDir));
  writeExclusive(hashingKeyFile(dataDir), newHashingKey().toString('base64url'));
}

/** Writes a key as `secret-hashing.<fingerprint>.key` (left as it is if already there); returns the file. */
export function keepHashingKey(dataDir: string, key: Buffer): string {
  ownerOnlyFolder(hashingKeyFolder(dataDir));
  const file = retiredHashingKeyFile(dataDir, secretHashingKeyFingerprint(key));
  writeExclusive(file, key.toString('base64url'));
  return file;
}

/** Makes `key` the one in `secret-hashing.key`, replacing what was there in one step. */
export function installHashingKey(dataDir: string, key: Buffer): void {
  writeReplacing(hashingKeyFile(dataDir), key.toString('base64url'));
}

/** Removes a `secret-hashing.<fingerprint>.key` file, if there. */
export function removeKeptHashingKey(dataDir: string, fingerprint: string): void {
  try {
    unlinkSync(retiredHashingKeyFile(dataDir, fingerprint));
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}
