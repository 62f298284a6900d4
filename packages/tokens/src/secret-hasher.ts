import { createHmac } from 'node:crypto';

/**
 * Transaction keys, API keys and refresh tokens are stored only as HMAC-SHA256 under a
 * server-side key: a copy of the event log alone cannot be brute-forced offline.
 */
export interface SecretHasher {
  hash(secret: string): string;
}

export function createSecretHasher(key: Buffer): SecretHasher {
  if (key.length < 32) throw new Error('the hashing key must be at least 32 bytes');
  return {
    hash: (secret) => createHmac('sha256', key).update(secret, 'utf8').digest('base64url'),
  };
}
