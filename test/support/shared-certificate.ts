import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';

/**
 * One self-signed P-256 certificate for localhost and 127.0.0.1, written into each data folder's
 * `tls/` as Tessera would make it: servers that must trust each other before either starts (two
 * regions' issuers, a receiver beside Tessera) trust this one file (NODE_EXTRA_CA_CERTS).
 * Returns the certificate's path in the first folder.
 */
export async function writeSharedCertificate(folders: readonly string[]): Promise<string> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
  });
  for (const folder of folders) {
    mkdirSync(join(folder, 'tls'), { recursive: true, mode: 0o700 });
    writeFileSync(join(folder, 'tls', 'self-signed.key'), pems.private, { mode: 0o600 });
    writeFileSync(join(folder, 'tls', 'self-signed.crt'), pems.cert, { mode: 0o644 });
  }
  return join(folders[0]!, 'tls', 'self-signed.crt');
}
