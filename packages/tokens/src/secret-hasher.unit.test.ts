import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretHasher, secretHashingKeyFingerprint, SecretHashingKeyUnavailable, singleKeyHashers } from './secret-hasher.js';

const key = Buffer.alloc(32, 1);
const other = Buffer.alloc(32, 2);

describe('secret-hashing key fingerprint', () => {
  it('is 22 base64url characters, the same for the same key and different for another', () => {
    expect(secretHashingKeyFingerprint(key)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(secretHashingKeyFingerprint(Buffer.from(key))).toBe(secretHashingKeyFingerprint(key));
    expect(secretHashingKeyFingerprint(other)).not.toBe(secretHashingKeyFingerprint(key));
  });

  it('is keyed: neither a plain digest of the key nor any hash the key makes of a secret', () => {
    const fingerprint = secretHashingKeyFingerprint(key);
    for (const digest of ['sha256', 'sha512', 'sha1']) {
      expect(createHash(digest).update(key).digest().subarray(0, 16).toString('base64url')).not.toBe(fingerprint);
    }
    const hasher = createSecretHasher(key);
    expect(hasher.fingerprint).toBe(fingerprint);
    expect(hasher.hash('tessera secret-hashing key fingerprint v1').startsWith(fingerprint)).toBe(false);
  });
});

describe('one key as a keyring', () => {
  it('hashes under its own key, also for hashes that name no key (the log\'s first), and refuses another key as unavailable', () => {
    const hasher = createSecretHasher(key);
    const hashers = singleKeyHashers(hasher);
    expect(hashers.current()).toBe(hasher);
    expect(hashers.hashUnder(undefined, 's')).toBe(hasher.hash('s'));
    expect(hashers.hashUnder(hasher.fingerprint, 's')).toBe(hasher.hash('s'));
    expect(() => hashers.hashUnder(secretHashingKeyFingerprint(other), 's')).toThrow(SecretHashingKeyUnavailable);
  });
});
