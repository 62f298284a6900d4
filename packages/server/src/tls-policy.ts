import type { TlsOptions } from 'node:tls';

/**
 * TLS 1.2 suites: ECDHE only (forward secrecy) with an AEAD cipher (AES-GCM, ChaCha20-Poly1305),
 * for ECDSA and RSA certificates alike; no CBC, SHA-1 MAC, CCM, ARIA, Camellia or static RSA/DH.
 * The TLS 1.3 suites are Node's own three (all AEAD), named so the list says everything offered.
 */
export const tls12Ciphers = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
] as const;
export const tls13Ciphers = ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256'] as const;

/** What every Tessera HTTPS listener offers: TLS 1.2 and 1.3 only, the suites above, in our order. */
export function tlsPolicy(): Pick<TlsOptions, 'minVersion' | 'ciphers' | 'honorCipherOrder'> {
  return { minVersion: 'TLSv1.2', ciphers: [...tls13Ciphers, ...tls12Ciphers].join(':'), honorCipherOrder: true };
}
