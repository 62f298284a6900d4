import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SecretHashingKeyUnavailable, type SecretHashers } from '@tessera/tokens';

/**
 * A push endpoint's Authorization header is a secret of the receiver's: it goes into the log
 * sealed with AES-256-GCM, so a copy of the log alone does not reveal it. The AES key is the
 * secret-hashing key's HMAC-SHA256 of a fixed label (HMAC as the key-derivation PRF), and the
 * sealed text names that key's fingerprint, so a header sealed before a rotation of the
 * secret-hashing key still opens while the retired key is kept. The stream id is the additional
 * data: a sealed header moved onto another stream does not open.
 */
export interface HeaderSeal {
  seal(streamId: string, header: string): string;
  /** The header, or undefined when the sealed text was not made for this stream with a key at hand. */
  open(streamId: string, sealed: string): string | undefined;
}

const sealingLabel = 'tessera ssf push authorization header v1';

export function createHeaderSeal(hashers: SecretHashers): HeaderSeal {
  const keyUnder = (fingerprint: string) => Buffer.from(hashers.hashUnder(fingerprint, sealingLabel), 'base64url');
  return {
    seal(streamId, header) {
      const { fingerprint } = hashers.current();
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keyUnder(fingerprint), iv);
      cipher.setAAD(Buffer.from(streamId, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(header, 'utf8'), cipher.final()]);
      return ['v1', fingerprint, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(streamId, sealed) {
      const [version, fingerprint, iv, ciphertext, tag] = sealed.split('.');
      if (version !== 'v1' || !fingerprint || iv === undefined || ciphertext === undefined || tag === undefined) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', keyUnder(fingerprint), Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(streamId, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch (error) {
        // A key that is not at hand is an outage of that key, not a forged header: the caller retries.
        if (error instanceof SecretHashingKeyUnavailable) throw error;
        return undefined;
      }
    },
  };
}
