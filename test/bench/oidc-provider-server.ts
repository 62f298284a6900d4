/**
 * Child process: panva oidc-provider 9 as an OAuth 2.0 authorization server doing the
 * client_credentials grant and the refresh_token grant with rotation, issuing JWT access
 * tokens (RFC 9068, via resource indicators) from its own in-memory adapter — nothing is made
 * durable. Listens on 127.0.0.1 over HTTPS with the same certificate and key as the Tessera
 * under test, then prints its port.
 *
 * Refresh tokens come from the authorization_code grant (client_credentials issues none): the
 * bench drives the real flow (/auth → interaction → /auth/:uid → code → /token). The one part
 * a person would do, the login and consent page, is answered here by /interaction/:uid with
 * oidc-provider's own interactionFinished: a new account each time, and a Grant of the API's
 * scope, as an application's consent page does. issueRefreshToken answers yes without the
 * offline_access scope, so no openid scope (and no ID token) is needed: each refresh signs one
 * access token, as Tessera's does. rotateRefreshToken=true: each refresh consumes the token
 * and returns a new one (a used one revokes the grant).
 *
 * Adapter: oidc-provider's own MemoryAdapter over its own LRU, with room for 5 M entries. The
 * default keeps 1000 entries and would drop a pool of refresh tokens larger than that.
 *
 * env: BENCH_TLS_CERT, BENCH_TLS_KEY (PEM files), BENCH_OIDC_ALG (ES256 | EdDSA),
 *      BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, BENCH_REDIRECT_URI.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import LRU from 'oidc-provider/lib/helpers/lru.js';

const alg = process.env.BENCH_OIDC_ALG === 'EdDSA' ? 'EdDSA' : 'ES256';
const resource = 'urn:tessera-bench:api';
const signingKey =
  alg === 'EdDSA' ? generateKeyPairSync('ed25519').privateKey : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const jwk = { ...signingKey.export({ format: 'jwk' }), kid: `bench-${alg}`, alg, use: 'sig' };

const storage = new LRU({ maxSize: 5_000_000 });
let accounts = 0;

const server = createServer({ cert: readFileSync(process.env.BENCH_TLS_CERT ?? ''), key: readFileSync(process.env.BENCH_TLS_KEY ?? '') });
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  const provider = new Provider(`https://127.0.0.1:${port}`, {
    clients: [
      {
        client_id: process.env.BENCH_CLIENT_ID,
        client_secret: process.env.BENCH_CLIENT_SECRET,
        grant_types: ['client_credentials', 'authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [process.env.BENCH_REDIRECT_URI],
        token_endpoint_auth_method: 'client_secret_post',
        scope: 'transaction:charge',
        id_token_signed_response_alg: alg,
      },
    ],
    adapter: (model: string) => new MemoryAdapter(model, storage),
    jwks: { keys: [jwk] },
    enabledJWA: { authorizationSigningAlgValues: [alg], idTokenSigningAlgValues: [alg] },
    scopes: ['transaction:charge'],
    rotateRefreshToken: true,
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
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
  const callback = provider.callback();
  /** The login and consent page: a new account, and a grant of the API's scope. */
  const finishInteraction = async (request: IncomingMessage, response: ServerResponse) => {
    const details = await provider.interactionDetails(request, response);
    const accountId = `bench-user-${(accounts += 1)}`;
    const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    // The scope is both the provider's (scopes: below) and the API's: the grant names it as each.
    grant.addOIDCScope('transaction:charge');
    grant.addResourceScope(resource, 'transaction:charge');
    const grantId = await grant.save();
    await provider.interactionFinished(request, response, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.url?.startsWith('/interaction/')) {
      finishInteraction(request, response).catch((error: unknown) => {
        response.statusCode = 500;
        response.end(String(error));
      });
      return;
    }
    callback(request, response);
  });
  process.stdout.write(`${JSON.stringify({ port, alg })}\n`);
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
