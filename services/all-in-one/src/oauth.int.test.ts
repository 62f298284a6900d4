import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService, type CreatedAccount } from '@tessera/accounts';
import { streams } from '@tessera/events';
import { epochSeconds, systemClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * The OAuth 2.0 door (RFC 6749, 7009, 7662, 8414) on the all-in-one as `tessera start` wires it:
 * each endpoint's answers, and that it moves the same families as the v5 routes.
 */
const publicUrl = 'https://auth.example.test';
let tessera: InProcessAllInOne;
let shop: CreatedAccount;
let other: CreatedAccount;
let resourceServer: CreatedAccount;
const payments = 'https://payments.example.test';

beforeAll(async () => {
  tessera = await startInProcess({ env: { TESSERA_PUBLIC_URL: publicUrl, TESSERA_ACCESS_TOKEN_TTL: '600' } });
  const accounts = createAccountService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'test' });
  shop = await accounts.create({ name: 'Shop', permissions: ['transaction:charge', 'transaction:refund'], legacy: false });
  other = await accounts.create({ name: 'Other', permissions: ['transaction:charge'], legacy: false });
  resourceServer = await accounts.create({ name: 'Gateway', permissions: ['tessera:introspect'], legacy: false });
  await accounts.setAudiences(shop.accountId, [payments]);
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

const basic = (account: CreatedAccount) => `Basic ${Buffer.from(`${encodeURIComponent(account.apiLoginId)}:${encodeURIComponent(account.transactionKey)}`).toString('base64')}`;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const post = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  tessera.app.inject({ method: 'POST', url, payload: form(fields), headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
const token = (fields: Record<string, string>, client?: CreatedAccount) => post('/oauth2/token', fields, client ? { authorization: basic(client) } : {});
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
const charge = (accessToken: string) => tessera.app.inject({ method: 'POST', url: '/v5/Transaction/charge', headers: { authorization: `Bearer ${accessToken}` }, payload: {} });
const head = async () => (await tessera.store.headPosition()) ?? 0n;

interface OAuthPair {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
}

describe('GET /.well-known/oauth-authorization-server (RFC 8414)', () => {
  it('names the issuer (TESSERA_PUBLIC_URL) and exactly the endpoints, grants and client authentication methods supported', async () => {
    const answer = await tessera.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({
      issuer: publicUrl,
      token_endpoint: `${publicUrl}/oauth2/token`,
      jwks_uri: `${publicUrl}/.well-known/jwks.json`,
      introspection_endpoint: `${publicUrl}/oauth2/introspect`,
      revocation_endpoint: `${publicUrl}/oauth2/revoke`,
      grant_types_supported: ['client_credentials', 'refresh_token'],
      response_types_supported: [],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA'],
      introspection_endpoint_auth_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA'],
      revocation_endpoint_auth_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA'],
      dpop_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA'],
    });
    expect((await tessera.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).statusCode).toBe(404);
  });
});

describe('POST /oauth2/token: client_credentials (RFC 6749 section 4.4)', () => {
  it('client_secret_basic: a family like get-oauth-token makes, its access token carrying iss = the metadata issuer, accepted by the verifier', async () => {
    const before = await head();
    const answer = await token({ grant_type: 'client_credentials' }, shop);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers.pragma).toBe('no-cache');
    const pair = answer.json<OAuthPair>();
    expect(pair).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 600, refresh_token: expect.stringMatching(/^\S+$/), scope: 'transaction:charge transaction:refund' });
    const claims = claimsOf(pair.access_token);
    expect(claims).toMatchObject({ iss: publicUrl, aud: 'tessera:v5', sub: shop.accountId, client_id: shop.apiLoginId, scope: 'transaction:charge transaction:refund', gen: 0 });
    expect((await charge(pair.access_token)).statusCode).toBe(200);
    const [issued] = await tessera.store.readStream(streams.family(String(claims.fid)));
    expect(issued?.event).toMatchObject({ type: 'TokenIssued', accountId: shop.accountId, apiLoginId: shop.apiLoginId, generation: 0 });
    expect(issued?.event).not.toHaveProperty('requestedScope');
    expect(issued?.metadata.actor).toBe('oauth2:client_credentials');
    expect(issued!.position).toBeGreaterThan(before);
  });

  it('client_secret_post: client_id and client_secret in the body', async () => {
    const answer = await token({ grant_type: 'client_credentials', client_id: other.apiLoginId, client_secret: other.transactionKey });
    expect(answer.statusCode).toBe(200);
    expect(claimsOf(answer.json<OAuthPair>().access_token).client_id).toBe(other.apiLoginId);
  });

  it('refuses a wrong or missing client authentication with 401 invalid_client and a Basic challenge, and records nothing', async () => {
    const before = await head();
    for (const refused of [
      await token({ grant_type: 'client_credentials' }, { ...shop, transactionKey: `${shop.transactionKey}x` }),
      await token({ grant_type: 'client_credentials', client_id: shop.apiLoginId, client_secret: 'wrong' }),
      await token({ grant_type: 'client_credentials' }),
      await token({ grant_type: 'client_credentials' }, { ...shop, apiLoginId: 'no-such-client' }),
    ]) {
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['content-type']).toMatch(/^application\/json/);
      expect(refused.headers['www-authenticate']).toMatch(/^Basic realm="tessera"/);
      expect(refused.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    }
    expect(await head()).toBe(before);
  });

  it('refuses two authentication methods at once (RFC 6749 section 2.3) with 401 invalid_client', async () => {
    const answer = await token({ grant_type: 'client_credentials', client_id: shop.apiLoginId, client_secret: shop.transactionKey }, shop);
    expect(answer.statusCode).toBe(401);
    expect(answer.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('scope narrows the family for good: a refresh never gets back what the scope left out', async () => {
    const narrowed = await token({ grant_type: 'client_credentials', scope: 'transaction:refund' }, shop);
    expect(narrowed.statusCode).toBe(200);
    const pair = narrowed.json<OAuthPair>();
    expect(pair.scope).toBe('transaction:refund');
    expect(claimsOf(pair.access_token).scope).toBe('transaction:refund');
    expect((await charge(pair.access_token)).statusCode).toBe(403);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token }, shop);
    expect(refreshed.json<OAuthPair>().scope).toBe('transaction:refund');
    // The v5 door keeps the family's scope too.
    const v5 = await tessera.app.inject({ method: 'POST', url: '/v5/Authorization/refresh-oauth-token', payload: { refresh_token: refreshed.json<OAuthPair>().refresh_token } });
    expect(v5.statusCode).toBe(200);
    expect(claimsOf(v5.json<{ token: string }>().token).scope).toBe('transaction:refund');
  });

  it('refuses a scope wider than the account\'s permissions with 400 invalid_scope, recording nothing', async () => {
    const before = await head();
    const answer = await token({ grant_type: 'client_credentials', scope: 'transaction:charge admin:everything' }, shop);
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toEqual({ error: 'invalid_scope', error_description: expect.stringContaining('admin:everything') });
    expect(await head()).toBe(before);
  });

  it('answers an unknown grant with 400 unsupported_grant_type, a missing one with invalid_request, JSON with 415 — all RFC 6749 JSON, never problem+json', async () => {
    const unknown = await token({ grant_type: 'password', username: 'u', password: 'p' }, shop);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ error: 'unsupported_grant_type' });
    const missing = await token({}, shop);
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'invalid_request' });
    const json = await tessera.app.inject({ method: 'POST', url: '/oauth2/token', payload: { grant_type: 'client_credentials' }, headers: { authorization: basic(shop) } });
    expect(json.statusCode).toBe(415);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.json()).toMatchObject({ error: 'invalid_request' });
    const repeated = await tessera.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      payload: 'grant_type=client_credentials&grant_type=refresh_token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(shop) },
    });
    expect(repeated.statusCode).toBe(400);
    expect(repeated.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('POST /oauth2/token: refresh_token (RFC 6749 section 6)', () => {
  it('rotates the family with the spec\'s single-use rule, and a v5 family\'s refresh token works here too', async () => {
    const v5 = (await tessera.app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: shop.apiLoginId, transaction_key: shop.transactionKey } })).json<{
      token: string;
      refresh_token: string;
    }>();
    const rotated = await token({ grant_type: 'refresh_token', refresh_token: v5.refresh_token }, shop);
    expect(rotated.statusCode).toBe(200);
    const pair = rotated.json<OAuthPair>();
    expect(claimsOf(pair.access_token)).toMatchObject({ iss: publicUrl, fid: claimsOf(v5.token).fid, gen: 1 });
    // The replaced access token is refused at once, as after a v5 refresh.
    expect((await charge(v5.token)).statusCode).toBe(401);
    const again = await token({ grant_type: 'refresh_token', refresh_token: v5.refresh_token }, shop);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses another client\'s refresh token with invalid_grant and leaves the family to its owner', async () => {
    const pair = (await token({ grant_type: 'client_credentials' }, shop)).json<OAuthPair>();
    const stolen = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token }, other);
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await charge(pair.access_token)).statusCode).toBe(200);
    expect((await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token }, shop)).statusCode).toBe(200);
  });

  it('a scope on a refresh narrows that access token; a wider one is invalid_scope and leaves the token current', async () => {
    const pair = (await token({ grant_type: 'client_credentials', scope: 'transaction:charge' }, shop)).json<OAuthPair>();
    const wider = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token, scope: 'transaction:charge transaction:refund' }, shop);
    expect(wider.statusCode).toBe(400);
    expect(wider.json()).toMatchObject({ error: 'invalid_scope' });
    const same = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token, scope: 'transaction:charge' }, shop);
    expect(same.statusCode).toBe(200);
  });

  it('needs the refresh_token parameter', async () => {
    const answer = await token({ grant_type: 'refresh_token' }, shop);
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('POST /oauth2/revoke (RFC 7009)', () => {
  it('revoking a refresh token revokes its family: its access token is refused, and the TokenRevoked names the OAuth door', async () => {
    const pair = (await token({ grant_type: 'client_credentials' }, shop)).json<OAuthPair>();
    const answer = await post('/oauth2/revoke', { token: pair.refresh_token, token_type_hint: 'refresh_token' }, { authorization: basic(shop) });
    expect(answer.statusCode).toBe(200);
    expect((await charge(pair.access_token)).statusCode).toBe(401);
    const events = await tessera.store.readStream(streams.family(String(claimsOf(pair.access_token).fid)));
    expect(events.at(-1)?.event.type).toBe('TokenRevoked');
    expect(events.at(-1)?.metadata.actor).toBe('oauth2:revoke');
  });

  it('revoking an access token revokes its family, whatever the hint', async () => {
    const pair = (await token({ grant_type: 'client_credentials' }, shop)).json<OAuthPair>();
    expect((await post('/oauth2/revoke', { token: pair.access_token, token_type_hint: 'refresh_token' }, { authorization: basic(shop) })).statusCode).toBe(200);
    expect((await charge(pair.access_token)).statusCode).toBe(401);
    expect((await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token }, shop)).statusCode).toBe(400);
  });

  it('refuses another client\'s token with 400 unauthorized_client, revoking nothing', async () => {
    const pair = (await token({ grant_type: 'client_credentials' }, shop)).json<OAuthPair>();
    for (const presented of [pair.refresh_token, pair.access_token]) {
      const refused = await post('/oauth2/revoke', { token: presented }, { authorization: basic(other) });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({ error: 'unauthorized_client' });
    }
    expect((await charge(pair.access_token)).statusCode).toBe(200);
  });

  it('answers 200 for a token that is unknown, used or already revoked (section 2.2), and 401 without client authentication', async () => {
    const pair = (await token({ grant_type: 'client_credentials' }, shop)).json<OAuthPair>();
    await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token }, shop);
    for (const presented of ['not-a-token', pair.refresh_token, 'eyJhbGciOiJFUzI1NiJ9.e30.AAAA']) {
      expect((await post('/oauth2/revoke', { token: presented }, { authorization: basic(shop) })).statusCode).toBe(200);
    }
    const unauthenticated = await post('/oauth2/revoke', { token: pair.access_token });
    expect(unauthenticated.statusCode).toBe(401);
    expect(unauthenticated.json()).toMatchObject({ error: 'invalid_client' });
  });
});

describe('POST /oauth2/introspect (RFC 7662)', () => {
  const introspect = async (presented: string, caller: CreatedAccount) => (await post('/oauth2/introspect', { token: presented }, { authorization: basic(caller) })).json<Record<string, unknown>>();

  it('answers for the caller\'s own tokens, for every token to a client with tessera:introspect, and {"active": false} to anyone else', async () => {
    const pair = (await token({ grant_type: 'client_credentials', scope: 'transaction:charge' }, shop)).json<OAuthPair>();
    const claims = claimsOf(pair.access_token);
    const expected = {
      active: true,
      token_type: 'Bearer',
      client_id: shop.apiLoginId,
      sub: shop.accountId,
      scope: 'transaction:charge',
      aud: 'tessera:v5',
      iss: publicUrl,
      exp: claims.exp,
      iat: claims.iat,
      jti: claims.jti,
    };
    expect(await introspect(pair.access_token, shop)).toEqual(expected);
    expect(await introspect(pair.access_token, resourceServer)).toEqual(expected);
    expect(await introspect(pair.access_token, other)).toEqual({ active: false });
    expect(await introspect(pair.refresh_token, shop)).toEqual({
      active: true,
      token_type: 'refresh_token',
      client_id: shop.apiLoginId,
      sub: shop.accountId,
      scope: 'transaction:charge',
      exp: expect.any(Number),
    });
  });

  it('is inactive for a replaced, a revoked or an unknown token, the moment the change is durable', async () => {
    const pair = (await token({ grant_type: 'client_credentials' }, shop)).json<OAuthPair>();
    const next = (await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token }, shop)).json<OAuthPair>();
    expect(await introspect(pair.access_token, resourceServer)).toEqual({ active: false });
    expect(await introspect(pair.refresh_token, resourceServer)).toEqual({ active: false });
    expect(await introspect(next.access_token, resourceServer)).toMatchObject({ active: true });
    await post('/oauth2/revoke', { token: next.refresh_token }, { authorization: basic(shop) });
    expect(await introspect(next.access_token, resourceServer)).toEqual({ active: false });
    expect(await introspect(next.refresh_token, resourceServer)).toEqual({ active: false });
    expect(await introspect('garbage', resourceServer)).toEqual({ active: false });
  });

  it('introspects a v5 token (iss TESSERA_ISSUER) as well', async () => {
    const v5 = (await tessera.app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: shop.apiLoginId, transaction_key: shop.transactionKey } })).json<{ token: string }>();
    expect(await introspect(v5.token, resourceServer)).toMatchObject({ active: true, iss: 'urn:tessera:issuer', client_id: shop.apiLoginId });
  });

  it('refuses a caller that does not authenticate with 401 invalid_client', async () => {
    const answer = await post('/oauth2/introspect', { token: 'anything' });
    expect(answer.statusCode).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/^Basic /);
    expect(answer.json()).toMatchObject({ error: 'invalid_client' });
  });
});

describe('resource (RFC 8707): per-service audiences', () => {
  const forwardAuth = (accessToken: string, query: string) =>
    tessera.app.inject({ method: 'GET', url: `/forward-auth?permission=transaction:charge${query}`, headers: { authorization: `Bearer ${accessToken}` } });

  it('sets aud to one of the account\'s audiences: accepted where that audience is expected, refused where it is not', async () => {
    const answer = await token({ grant_type: 'client_credentials', resource: payments }, shop);
    expect(answer.statusCode).toBe(200);
    const pair = answer.json<OAuthPair>();
    expect(claimsOf(pair.access_token).aud).toBe(payments);
    expect((await forwardAuth(pair.access_token, `&audience=${encodeURIComponent(payments)}`)).statusCode).toBe(200);
    // A verifier that expects no audience accepts only the default one: a token minted for a resource is no good elsewhere.
    expect((await forwardAuth(pair.access_token, '')).statusCode).toBe(401);
    expect((await charge(pair.access_token)).statusCode).toBe(401);
    // And a default-audience token is no good where the resource is expected.
    const plain = (await token({ grant_type: 'client_credentials' }, shop)).json<OAuthPair>();
    expect((await forwardAuth(plain.access_token, `&audience=${encodeURIComponent(payments)}`)).statusCode).toBe(401);
    expect(await (await post('/oauth2/introspect', { token: pair.access_token }, { authorization: basic(resourceServer) })).json()).toMatchObject({ active: true, aud: payments });
  });

  it('keeps the family\'s audience through refreshes; another resource on a refresh is invalid_target', async () => {
    const pair = (await token({ grant_type: 'client_credentials', resource: payments }, shop)).json<OAuthPair>();
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token }, shop);
    expect(claimsOf(refreshed.json<OAuthPair>().access_token).aud).toBe(payments);
    const other = await token({ grant_type: 'refresh_token', refresh_token: refreshed.json<OAuthPair>().refresh_token, resource: 'https://elsewhere.example.test' }, shop);
    expect(other.statusCode).toBe(400);
    expect(other.json()).toMatchObject({ error: 'invalid_target' });
  });

  it('refuses a resource the account may not ask for with 400 invalid_target, recording nothing', async () => {
    const before = await head();
    for (const client of [shop, other]) {
      const refused = await token({ grant_type: 'client_credentials', resource: client === shop ? 'https://elsewhere.example.test' : payments }, client);
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({ error: 'invalid_target' });
    }
    expect(await head()).toBe(before);
  });
});
