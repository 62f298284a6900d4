import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsFetch, type HttpsFetch } from '../support/https-fetch.js';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * openid-client (panva), a stock OAuth 2.0 client nobody here wrote, against `tessera start` over
 * HTTPS: RFC 8414 discovery, then client_credentials with each client authentication method,
 * refresh, introspection and revocation, as docs/oauth.md shows them. The server runs on a port
 * it chose itself and no TESSERA_PUBLIC_URL, so the issuer is the default built from the bound port.
 */
let tessera: TesseraProcess;
let shop: Credentials;
let gateway: Credentials;
let caFetch: HttpsFetch;
/** Where clients reach the issuer: TESSERA_HOST (127.0.0.1 here) and the port the public listener bound. */
let issuer: string;

beforeAll(async () => {
  tessera = await startTessera();
  shop = await tessera.createAccount({ name: 'Shop', permissions: ['transaction:charge', 'transaction:refund'] });
  gateway = await tessera.createAccount({ name: 'Gateway', permissions: ['tessera:introspect'] });
  caFetch = httpsFetch(readFileSync(join(tessera.dataDir, 'tls', 'self-signed.crt')));
  issuer = `https://127.0.0.1:${new URL(tessera.baseUrl).port}`;
});
afterAll(async () => {
  await tessera?.stop();
});

/** openid-client's configuration for an account, discovered from the issuer's RFC 8414 metadata. */
async function configure(account: Credentials, authentication: (secret: string) => client.ClientAuth): Promise<client.Configuration> {
  // openid-client's custom fetch takes (url, options): the test's fetch trusts the server's own certificate.
  const customFetch = (url: string, options: client.CustomFetchOptions) => caFetch(url, options as RequestInit);
  const config = await client.discovery(new URL(issuer), account.api_login_id, undefined, authentication(account.transaction_key), {
    algorithm: 'oauth2',
    [client.customFetch]: customFetch,
  });
  config[client.customFetch] = customFetch;
  return config;
}

const charge = (accessToken: string) => tessera.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${accessToken}` });

describe('openid-client against the OAuth 2.0 endpoints', () => {
  it('discovers the issuer at the URL it was given: the default public URL follows the port the server bound', async () => {
    const config = await configure(shop, client.ClientSecretBasic);
    expect(config.serverMetadata()).toMatchObject({
      issuer,
      token_endpoint: `${issuer}/oauth2/token`,
      introspection_endpoint: `${issuer}/oauth2/introspect`,
      revocation_endpoint: `${issuer}/oauth2/revoke`,
    });
  });

  for (const [method, authentication] of [
    ['client_secret_basic', client.ClientSecretBasic],
    ['client_secret_post', client.ClientSecretPost],
  ] as const) {
    it(`${method}: client_credentials, a refresh, introspection by a resource server, and revocation that the verifier honours`, async () => {
      const config = await configure(shop, authentication);
      const tokens = await client.clientCredentialsGrant(config, { scope: 'transaction:charge' });
      expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'transaction:charge', expires_in: expect.any(Number), refresh_token: expect.any(String) });
      expect((await charge(tokens.access_token)).status).toBe(200);

      const renewed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      expect(renewed.scope).toBe('transaction:charge');
      expect((await charge(tokens.access_token)).status).toBe(401);
      expect((await charge(renewed.access_token)).status).toBe(200);

      const seenByGateway = await client.tokenIntrospection(await configure(gateway, authentication), renewed.access_token);
      expect(seenByGateway).toMatchObject({ active: true, client_id: shop.api_login_id, sub: shop.account_id, scope: 'transaction:charge', iss: issuer });

      await client.tokenRevocation(config, renewed.refresh_token!);
      expect((await charge(renewed.access_token)).status).toBe(401);
      expect(await client.tokenIntrospection(config, renewed.access_token)).toEqual({ active: false });
    });
  }

  it('surfaces RFC 6749 errors as the client library parses them: invalid_client, invalid_scope, invalid_grant', async () => {
    // Discovery needs no client authentication; the first grant does.
    const wrong = await configure({ ...shop, transaction_key: 'not-the-key' }, client.ClientSecretBasic);
    const refusedClient = await client.clientCredentialsGrant(wrong).catch((error: unknown) => error);
    // A 401 carries the Basic challenge RFC 6749 section 5.2 requires; the library reports the challenge and keeps the RFC 6749 body.
    expect(refusedClient).toBeInstanceOf(client.WWWAuthenticateChallengeError);
    const challenged = refusedClient as client.WWWAuthenticateChallengeError;
    expect(challenged.status).toBe(401);
    expect(challenged.cause[0]).toMatchObject({ scheme: 'basic', parameters: { realm: 'tessera' } });
    expect(await challenged.response.json()).toMatchObject({ error: 'invalid_client' });
    const config = await configure(shop, client.ClientSecretBasic);
    const widened = await client.clientCredentialsGrant(config, { scope: 'transaction:charge admin:all' }).catch((error: unknown) => error);
    expect(widened).toMatchObject({ error: 'invalid_scope', status: 400 });
    const used = await client.clientCredentialsGrant(config);
    await client.refreshTokenGrant(config, used.refresh_token!);
    const reused = await client.refreshTokenGrant(config, used.refresh_token!).catch((error: unknown) => error);
    expect(reused).toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  it('private_key_jwt (RFC 7523): keys registered with tessera accounts set-client-keys, then client_credentials, a refresh, introspection and revocation signed with the private key', async () => {
    const signer = await tessera.createAccount({ name: 'Signer', permissions: ['transaction:charge'] });
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwksFile = join(tessera.dataDir, 'signer-jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'signer-1', use: 'sig' }] }));
    const set = JSON.parse((await tessera.tessera(['accounts', 'set-client-keys', '--account', signer.account_id, '--jwks-file', jwksFile, '--json'])).stdout) as Record<string, unknown>;
    expect(set).toMatchObject({ account_id: signer.account_id, kids: ['signer-1'], events: ['ClientKeysSet'] });

    const config = await configure(signer, () => client.PrivateKeyJwt({ key: privateKey, kid: 'signer-1' }));
    expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    // The CLI wrote to the log; the server folds it in shortly after.
    await expect.poll(async () => (await client.clientCredentialsGrant(config).catch(() => undefined))?.token_type, { timeout: 5000 }).toBe('bearer');
    const tokens = await client.clientCredentialsGrant(config);
    expect((await charge(tokens.access_token)).status).toBe(200);
    const renewed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(await client.tokenIntrospection(config, renewed.access_token)).toMatchObject({ active: true, client_id: signer.api_login_id });
    await client.tokenRevocation(config, renewed.refresh_token!);
    expect((await charge(renewed.access_token)).status).toBe(401);

    // Another key than the registered one signs nothing this client can use.
    const stranger = await generateKeyPair('ES256');
    const forged = await configure(signer, () => client.PrivateKeyJwt({ key: stranger.privateKey, kid: 'signer-1' }));
    expect(await client.clientCredentialsGrant(forged).catch((error: unknown) => error)).toMatchObject({ status: 401 });
  });
});
