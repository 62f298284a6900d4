import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * A push endpoint's Authorization header is a secret of the receiver's: it goes into the log
 * sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the secret-hashing key, so a copy
 * of the log alone does not reveal it. The stream id is the additional data: a sealed header
 * moved onto another stream does not open.
 */
export interface HeaderSeal {
  seal(streamId: string, header: string): string;
  /** The header, or undefined when the sealed text was not made with this key for this stream. */
  open(streamId: string, sealed: string): string | undefined;
}

export function createHeaderSeal(hashingKey: Buffer): HeaderSeal {
  const key = Buffer.from(hkdfSync('sha256', hashingKey, Buffer.alloc(0), 'tessera ssf push authorization header', 32));
  return {
    seal(streamId, header) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(streamId, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(header, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(streamId, sealed) {
      const [version, iv, ciphertext, tag] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || ciphertext === undefined || tag === undefined) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(streamId, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return undefined;
      }
    },
  };
}
