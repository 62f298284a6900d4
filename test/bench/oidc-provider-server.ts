/**
 * Child process: panva oidc-provider 9 as an OAuth 2.0 authorization server doing the
 * client_credentials grant, issuing JWT access tokens (RFC 9068, via resource indicators)
 * from its default in-memory adapter — nothing is made durable. Listens on 127.0.0.1 over
 * HTTPS with the same certificate and key as the Tessera under test, then prints its port.
 *
 * env: BENCH_TLS_CERT, BENCH_TLS_KEY (PEM files), BENCH_OIDC_ALG (ES256 | EdDSA),
 *      BENCH_CLIENT_ID, BENCH_CLIENT_SECRET.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

const alg = process.env.BENCH_OIDC_ALG === 'EdDSA' ? 'EdDSA' : 'ES256';
const resource = 'urn:tessera-bench:api';
const signingKey =
  alg === 'EdDSA' ? generateKeyPairSync('ed25519').privateKey : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const jwk = { ...signingKey.export({ format: 'jwk' }), kid: `bench-${alg}`, alg, use: 'sig' };

const server = createServer({ cert: readFileSync(process.env.BENCH_TLS_CERT ?? ''), key: readFileSync(process.env.BENCH_TLS_KEY ?? '') });
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  const provider = new Provider(`https://127.0.0.1:${port}`, {
    clients: [
      {
        client_id: process.env.BENCH_CLIENT_ID,
        client_secret: process.env.BENCH_CLIENT_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_post',
        scope: 'transaction:charge',
        id_token_signed_response_alg: alg,
      },
    ],
    jwks: { keys: [jwk] },
    enabledJWA: { authorizationSigningAlgValues: [alg], idTokenSigningAlgValues: [alg] },
    scopes: ['transaction:charge'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'transaction:charge',
          audience: resource,
          accessTokenTTL: 3600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg } },
        }),
      },
    },
  });
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ port, alg })}\n`);
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
