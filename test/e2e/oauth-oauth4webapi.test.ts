import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsFetch, type HttpsFetch } from '../support/https-fetch.js';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * oauth4webapi (panva), the low-level library under openid-client, for the raw checks: each
 * request made and each answer processed by its own function, so every RFC check it does on an
 * answer is visible here, and its RFC 9068 validation of Tessera's access tokens as a resource
 * server would run it, against `tessera start`.
 */
let tessera: TesseraProcess;
let shop: Credentials;
let gateway: Credentials;
let caFetch: HttpsFetch;
let issuer: URL;
let as: oauth.AuthorizationServer;

// oauth4webapi's custom fetch takes (url, options): the test's fetch trusts the server's own certificate.
const customFetch = { [oauth.customFetch]: (url: string, options: oauth.CustomFetchOptions<string, unknown>) => caFetch(url, options as RequestInit) };

beforeAll(async () => {
  tessera = await startTessera();
  shop = await tessera.createAccount({ name: 'Shop', permissions: ['transaction:charge', 'transaction:refund'] });
  gateway = await tessera.createAccount({ name: 'Gateway', permissions: ['tessera:introspect'] });
  caFetch = httpsFetch(readFileSync(join(tessera.dataDir, 'tls', 'self-signed.crt')));
  issuer = new URL(`https://127.0.0.1:${new URL(tessera.baseUrl).port}`);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...customFetch }));
});
afterAll(async () => {
  await tessera?.stop();
});

const clientOf = (account: Credentials): oauth.Client => ({ client_id: account.api_login_id });

describe('oauth4webapi against the OAuth 2.0 endpoints', () => {
  it('processes the metadata, a client_credentials answer, and validates the access token as RFC 9068 says a resource server must', async () => {
    expect(as).toMatchObject({ issuer: issuer.href.replace(/\/$/, ''), dpop_signing_alg_values_supported: expect.arrayContaining(['ES256']) });
    const client = clientOf(shop);
    const tokens = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(shop.transaction_key), { scope: 'transaction:charge' }, customFetch),
    );
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'transaction:charge' });

    // RFC 9068 section 4: typ at+jwt, the signature by a key of jwks_uri, iss = the metadata's issuer, aud, exp, iat, jti, sub, client_id.
    const claims = await oauth.validateJwtAccessToken(as, new Request(`${issuer.origin}/v5/Transaction/charge`, { headers: { authorization: `Bearer ${tokens.access_token}` } }), 'tessera:v5', customFetch);
    expect(claims).toMatchObject({ iss: as.issuer, aud: 'tessera:v5', client_id: shop.api_login_id, sub: shop.account_id, scope: 'transaction:charge' });

    const seen = await oauth.processIntrospectionResponse(as, clientOf(gateway), await oauth.introspectionRequest(as, clientOf(gateway), oauth.ClientSecretPost(gateway.transaction_key), tokens.access_token, customFetch));
    expect(seen).toMatchObject({ active: true, client_id: shop.api_login_id, token_type: 'Bearer' });

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.ClientSecretBasic(shop.transaction_key), tokens.refresh_token!, customFetch));
    const after = await oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, oauth.ClientSecretBasic(shop.transaction_key), tokens.access_token, customFetch));
    expect(after).toEqual({ active: false });
  });

  it('a DPoP handle: a bound token, which its protected-resource request with a proof uses, and a bound refresh', async () => {
    const client = clientOf(shop);
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const authentication = oauth.ClientSecretBasic(shop.transaction_key);
    const tokens = await oauth.processClientCredentialsResponse(as, client, await oauth.clientCredentialsGrantRequest(as, client, authentication, { scope: 'transaction:charge' }, { DPoP, ...customFetch }));
    expect(tokens.token_type).toBe('dpop');

    const charge = await oauth.protectedResourceRequest(tokens.access_token, 'POST', new URL(`${issuer.origin}/v5/Transaction/charge`), new Headers({ 'content-type': 'application/json' }), '{}', { DPoP, ...customFetch });
    expect(charge.status).toBe(200);

    const renewed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, authentication, tokens.refresh_token!, { DPoP, ...customFetch }));
    expect(renewed.token_type).toBe('dpop');
  });

  it('raises the RFC 6749 errors with their codes and the WWW-Authenticate challenge of a 401', async () => {
    const client = clientOf(shop);
    const wrongSecret = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic('not-the-key'), {}, customFetch);
    const refused = await oauth.processClientCredentialsResponse(as, client, wrongSecret).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect((refused as oauth.WWWAuthenticateChallengeError).cause[0]).toMatchObject({ scheme: 'basic' });

    const wider = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(shop.transaction_key), { scope: 'transaction:void' }, customFetch);
    await expect(oauth.processClientCredentialsResponse(as, client, wider)).rejects.toMatchObject({ error: 'invalid_scope', status: 400 });
  });
});
