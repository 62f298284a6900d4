import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncFile } from './segment-file.js';
import { errorCode } from '@tessera/contracts/errors';

/**
 * The archive's signing key: Ed25519, of its own. Not a token signing key: those leave the JWKS an
 * hour after they retire, and an archive must verify for years. The private half stays in the data
 * folder's keys (0600); every public half ever used is kept in the archive itself, named by its
 * fingerprint, which an auditor pins out of band.
 */
export interface ArchiveKey {
  readonly fingerprint: string;
  readonly privateKey: KeyObject;
  readonly publicKeyPem: string;
}

/** SHA-256 of the public key's DER (SubjectPublicKeyInfo), hex: what `openssl pkey -pubin -outform DER | sha256sum` prints. */
export function fingerprintOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
}

export const archiveKeyFile = (keysDir: string): string => join(keysDir, 'archive-signing.key');
export const publicKeysDir = (archiveDir: string): string => join(archiveDir, 'keys');
export const publicKeyFile = (archiveDir: string, fingerprint: string): string => join(publicKeysDir(archiveDir), `${fingerprint}.pem`);

/**
 * The archive key in `keysDir`, made on first use; its public half is written into the archive's
 * key folder (kept forever, with every earlier one). The private key is written whole to a
 * temporary file, fsynced and linked into place, so a crash never leaves half a key.
 */
export function loadOrCreateArchiveKey(keysDir: string, archiveDir: string): ArchiveKey {
  const file = archiveKeyFile(keysDir);
  if (!existsSync(file)) {
    mkdirSync(keysDir, { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync('ed25519');
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    fsyncFile(temporary);
    try {
      // link, not rename: another process that made its key first keeps it, and this one uses that.
      linkSync(temporary, file);
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    } finally {
      rmSync(temporary, { force: true });
    }
    fsyncFile(keysDir);
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const privateKey = createPrivateKey(readFileSync(file));
  const publicKey = createPublicKey(privateKey);
  const fingerprint = fingerprintOf(publicKey);
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const published = publicKeyFile(archiveDir, fingerprint);
  if (!existsSync(published)) {
    mkdirSync(publicKeysDir(archiveDir), { recursive: true, mode: 0o700 });
    writeFileSync(published, publicKeyPem, { mode: 0o644 });
    fsyncFile(published);
    fsyncFile(publicKeysDir(archiveDir));
  }
  return { fingerprint, privateKey, publicKeyPem };
}

/** Every archive public key the archive holds, by fingerprint, each checked against its name. */
export function archivePublicKeys(archiveDir: string): { readonly fingerprint: string; readonly pem: string; readonly matchesName: boolean }[] {
  const folder = publicKeysDir(archiveDir);
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((name) => /^[0-9a-f]{64}\.pem$/.test(name))
    .sort()
    .map((name) => {
      const fingerprint = name.slice(0, 64);
      const pem = readFileSync(join(folder, name), 'utf8');
      let matchesName = false;
      try {
        matchesName = fingerprintOf(createPublicKey(pem)) === fingerprint;
      } catch {
        matchesName = false;
      }
      return { fingerprint, pem, matchesName };
    });
}

export const signBytes = (key: ArchiveKey, bytes: Buffer): Buffer => sign(null, bytes, key.privateKey);

export function verifyBytes(publicKeyPem: string, bytes: Buffer, signature: Buffer): boolean {
  try {
    return verify(null, bytes, createPublicKey(publicKeyPem), signature);
  } catch {
    return false;
  }
}
