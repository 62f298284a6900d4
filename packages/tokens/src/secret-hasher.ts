import { createHmac } from 'node:crypto';
import { InvalidArgument, CodedError } from '@tessera/contracts';

/**
 * Transaction keys, API keys, refresh tokens and admin tokens are stored only as HMAC-SHA256 under
 * a server-side key: a copy of the event log alone cannot be brute-forced offline. Each hash is
 * stored with the fingerprint of the key that made it, so keys can be rotated.
 */
export interface SecretHasher {
  /** The key's keyed fingerprint (`secretHashingKeyFingerprint`): written next to every hash it makes. */
  readonly fingerprint: string;
  hash(secret: string): string;
}

/** HMAC-SHA256 under the key itself over this label: a fingerprint that names a key and tells nothing usable about it. */
const fingerprintLabel = 'tessera secret-hashing key fingerprint v1';

/**
 * A secret-hashing key's fingerprint: the first 16 bytes of HMAC-SHA256(key, a fixed label), in
 * base64url (22 characters). Keyed, so it reveals nothing that helps guess the key or any hash it
 * made; long enough that two keys never share one.
 */
export function secretHashingKeyFingerprint(key: Buffer): string {
  return createHmac('sha256', key).update(fingerprintLabel, 'utf8').digest().subarray(0, 16).toString('base64url');
}

export function createSecretHasher(key: Buffer): SecretHasher {
  if (key.length < 32) throw new InvalidArgument('the hashing key must be at least 32 bytes');
  return {
    fingerprint: secretHashingKeyFingerprint(key),
    hash: (secret) => createHmac('sha256', key).update(secret, 'utf8').digest('base64url'),
  };
}

/**
 * What checks and makes hashes where keys may have been rotated: new hashes under the current key,
 * and a presented secret hashed under whichever key made the stored hash it is compared with.
 */
export interface SecretHashers {
  /** The hasher for new hashes. Throws SecretHashingKeyUnavailable when the log's current key is not at hand. */
  current(): SecretHasher;
  /**
   * `secret` hashed under the key with this fingerprint; undefined names the log's first key (a hash
   * stored before keys could be rotated). Throws SecretHashingKeyUnavailable when that key is not at hand.
   */
  hashUnder(fingerprint: string | undefined, secret: string): string;
  /** `secret` hashed under any key at hand, to compare with a stand-in: an unknown id costs what a known one does. */
  decoy(secret: string): string;
}

/** The key a hash names is not in this process's data folder: an outage of that key (503), not a wrong secret. */
export class SecretHashingKeyUnavailable extends CodedError {
  readonly code = 'ERR_SECRET_HASHING_KEY_UNAVAILABLE';
  constructor(message: string) {
    super(message);
    this.name = 'SecretHashingKeyUnavailable';
  }
}

/** One key, which is also the log's first: a log that was never rotated, and tests. */
export function singleKeyHashers(hasher: SecretHasher): SecretHashers {
  return {
    current: () => hasher,
    hashUnder: (fingerprint, secret) => {
      if (fingerprint !== undefined && fingerprint !== hasher.fingerprint) throw new SecretHashingKeyUnavailable(`no secret-hashing key ${fingerprint} here`);
      return hasher.hash(secret);
    },
    decoy: (secret) => hasher.hash(secret),
  };
}
