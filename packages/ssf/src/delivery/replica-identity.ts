import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';

/**
 * This replica's name in the delivery lease when TESSERA_REPLICA_ID is unset: the host name and the
 * keys folder, which no two replicas share (each signs with its own keys) and a restart keeps (a
 * StatefulSet pod keeps its host name and volume), so a restarted replica takes its lease back at once.
 */
export function defaultReplicaId(keysFolder: string): string {
  return `${hostname()}-${createHash('sha256').update(resolve(keysFolder)).digest('hex').slice(0, 8)}`;
}

/**
 * Where the other replicas reach this one when TESSERA_SSF_REPLICA_URL is unset: its own public
 * listener, over the loopback when it listens on every address (replicas on one machine). Before
 * the listener is bound (TESSERA_PORT=0) it names the configured port; each renewal reads it again.
 */
export function defaultReplicaUrl(listenHost: string, port: number): string {
  const host = listenHost === '0.0.0.0' || listenHost === '::' ? '127.0.0.1' : listenHost;
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** SHA-256 of the certificate in `file` (its first, the leaf), as Node prints a peer's; undefined while there is none. */
export function certificateSha256Of(file: string): string | undefined {
  try {
    return new X509Certificate(readFileSync(file)).fingerprint256;
  } catch {
    // Not made yet (a self-signed one is made as the listener starts): asked again at the next renewal.
    return undefined;
  }
}
