import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import type { TesseraConfig } from '@tessera/config';
import { replaceFileDurably } from '@tessera/host';
import { systemClock, type Clock } from '@tessera/timing';

export interface TlsMaterial {
  readonly cert: string;
  readonly key: string;
  /** True when we made it ourselves: fine for development, announced at start. */
  readonly selfSigned: boolean;
}

/** HTTPS only (docs/interface.md): the operator's certificate, or one made on first start and kept. */
export async function loadTlsMaterial(config: TesseraConfig, clock: Clock = systemClock): Promise<TlsMaterial> {
  if (config.TESSERA_TLS_CERT && config.TESSERA_TLS_KEY) {
    return { cert: readFileSync(config.TESSERA_TLS_CERT, 'utf8'), key: readFileSync(config.TESSERA_TLS_KEY, 'utf8'), selfSigned: false };
  }
  const dir = join(config.TESSERA_DATA_DIR, 'tls');
  const certFile = join(dir, 'self-signed.crt');
  const keyFile = join(dir, 'self-signed.key');
  // An empty file is what a power cut leaves of one written without fsync, as earlier releases
  // wrote these: a server started on it listens and fails every handshake. The pair is made again.
  const usable = (file: string) => existsSync(file) && statSync(file).size > 0;
  if (!usable(certFile) || !usable(keyFile)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const notAfterDate = new Date(clock.now());
    notAfterDate.setFullYear(notAfterDate.getFullYear() + 1);
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate,
      extensions: [
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
            { type: 7, ip: '::1' },
          ],
        },
      ],
    });
    // Fsynced before they count as made: a certificate handed to clients must still be there after a power cut.
    await replaceFileDurably(keyFile, pems.private);
    await replaceFileDurably(certFile, pems.cert);
    await chmod(certFile, 0o644);
  }
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), selfSigned: true };
}
