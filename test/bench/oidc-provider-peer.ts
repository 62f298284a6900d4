import { randomBytes } from 'node:crypto';
import { startChild, type BenchChild } from './children.js';
import type { OidcAlg } from './config.js';
import type { LoadTarget } from './load.js';

/** Parent side of oidc-provider-server.ts: starts it and describes its token request. */
export interface OidcProviderPeer {
  readonly child: BenchChild<{ port: number; alg: OidcAlg }>;
  readonly issue: LoadTarget;
  stop(): Promise<void>;
}

export async function startOidcProviderPeer(options: { alg: OidcAlg; tlsFiles: { cert: string; key: string } }): Promise<OidcProviderPeer> {
  const clientId = 'bench-client';
  const clientSecret = randomBytes(32).toString('base64url');
  const child = await startChild<{ port: number; alg: OidcAlg }>('oidc-provider-server.ts', {
    env: {
      BENCH_TLS_CERT: options.tlsFiles.cert,
      BENCH_TLS_KEY: options.tlsFiles.key,
      BENCH_OIDC_ALG: options.alg,
      BENCH_CLIENT_ID: clientId,
      BENCH_CLIENT_SECRET: clientSecret,
      NODE_ENV: 'production',
    },
  });
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
    scope: 'transaction:charge',
  }).toString();
  return {
    child,
    issue: {
      url: `https://127.0.0.1:${child.ready.port}/token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    },
    stop: () => child.stop(),
  };
}
