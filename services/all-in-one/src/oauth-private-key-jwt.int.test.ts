import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { createAccountService, InvalidAccountInput, type AccountService, type CreatedAccount } from '@tessera/accounts';
import { epochSeconds, systemClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * private_key_jwt (RFC 7523 section 2.2) on the OAuth 2.0 endpoints, as `tessera start` wires
 * them: each check of section 3 refuses an assertion with 401 invalid_client, and a good assertion
 * authenticates the client at the token, introspection and revocation endpoints.
 */
const publicUrl = 'https://auth.example.test';
const assertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
let tessera: InProcessAllInOne;
let accounts: AccountService;
let client: CreatedAccount;
let keyless: CreatedAccount;
let es256: { privateKey: CryptoKey; publicJwk: JWK };
let eddsa: { privateKey: CryptoKey; publicJwk: JWK };
/** An RSA key made for RS384: jose verifies RS384 with it, so only the allowed-algorithm list refuses it. */
let rs384: { privateKey: CryptoKey; publicJwk: JWK };

async function keyPair(alg: 'ES256' | 'EdDSA' | 'RS384', kid: string) {
  const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {});
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid } };
}

beforeAll(async () => {
  // The negative suite fails one client's authentication many times: a budget that does not throttle it.
  tessera = await startInProcess({ env: { TESSERA_PUBLIC_URL: publicUrl, TESSERA_THROTTLE_CREDENTIAL_FAILURES: '1000' } });
  accounts = createAccountService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'test' });
  client = await accounts.create({ name: 'Signer', permissions: ['transaction:charge'], legacy: false });
  keyless = await accounts.create({ name: 'Keyless', permissions: ['transaction:charge'], legacy: false });
  es256 = await keyPair('ES256', 'es-1');
  eddsa = await keyPair('EdDSA', 'ed-1');
  rs384 = await keyPair('RS384', 'rsa-1');
  await accounts.setClientKeys(client.accountId, { keys: [es256.publicJwk, eddsa.publicJwk, rs384.publicJwk] });
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

interface AssertionShape {
  readonly iss?: string;
  readonly sub?: string;
  readonly aud?: string | string[];
  readonly exp?: number | null;
  readonly jti?: string | null;
  readonly kid?: string;
  readonly key?: CryptoKey;
  readonly alg?: 'ES256' | 'EdDSA' | 'RS384';
}

/** An assertion for `client`, good unless `shape` says otherwise (null: the claim left out). */
async function assertion(shape: AssertionShape = {}): Promise<string> {
  const now = epochSeconds(systemClock);
  const alg = shape.alg ?? 'ES256';
  const jwt = new SignJWT({ ...(shape.jti === null ? {} : { jti: shape.jti ?? randomUUID() }) })
    .setProtectedHeader({ alg, kid: shape.kid ?? { ES256: 'es-1', EdDSA: 'ed-1', RS384: 'rsa-1' }[alg] })
    .setIssuer(shape.iss ?? client.apiLoginId)
    .setSubject(shape.sub ?? client.apiLoginId)
    .setAudience(shape.aud ?? publicUrl)
    .setIssuedAt(now);
  if (shape.exp !== null) jwt.setExpirationTime(shape.exp ?? now + 60);
  return jwt.sign(shape.key ?? { ES256: es256, EdDSA: eddsa, RS384: rs384 }[alg].privateKey);
}

/** A JWS with a header of our choosing and the given signature part: `none` and HS256 forged without the client's key. */
function unsignedAssertion(alg: string, signature: string): string {
  const now = epochSeconds(systemClock);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = { iss: client.apiLoginId, sub: client.apiLoginId, aud: publicUrl, exp: now + 60, iat: now, jti: randomUUID() };
  return `${part({ alg, kid: 'es-1' })}.${part(claims)}.${signature}`;
}

const post = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  tessera.app.inject({ method: 'POST', url, payload: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
const withAssertion = (jwt: string) => ({ client_assertion_type: assertionType, client_assertion: jwt });
const clientCredentials = async (jwt: string) => post('/oauth2/token', { grant_type: 'client_credentials', ...withAssertion(jwt) });

interface OAuthPair {
  access_token: string;
  refresh_token: string;
}

describe('private_key_jwt: a good assertion authenticates the client (RFC 7523 section 2.2)', () => {
  it('is announced in the metadata with the signing algorithms it takes', async () => {
    const metadata = (await tessera.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json<Record<string, string[]>>();
    for (const endpoint of ['token', 'introspection', 'revocation']) {
      expect(metadata[`${endpoint}_endpoint_auth_methods_supported`]).toContain('private_key_jwt');
      expect(metadata[`${endpoint}_endpoint_auth_signing_alg_values_supported`]).toEqual(['ES256', 'RS256', 'PS256', 'EdDSA']);
    }
  });

  it('client_credentials, a refresh, introspection and revocation, with ES256 and EdDSA keys, aud the issuer or the token endpoint', async () => {
    const issued = await clientCredentials(await assertion());
    expect(issued.statusCode).toBe(200);
    const pair = issued.json<OAuthPair>();
    const refreshed = await post('/oauth2/token', { grant_type: 'refresh_token', refresh_token: pair.refresh_token, ...withAssertion(await assertion({ alg: 'EdDSA', aud: `${publicUrl}/oauth2/token` })) });
    expect(refreshed.statusCode).toBe(200);
    const renewed = refreshed.json<OAuthPair>();
    const seen = await post('/oauth2/introspect', { token: renewed.access_token, client_id: client.apiLoginId, ...withAssertion(await assertion()) });
    expect(seen.json()).toMatchObject({ active: true, client_id: client.apiLoginId });
    const revoked = await post('/oauth2/revoke', { token: renewed.refresh_token, ...withAssertion(await assertion({ aud: [publicUrl, 'https://elsewhere.example.test'] })) });
    expect(revoked.statusCode).toBe(200);
    expect((await post('/oauth2/introspect', { token: renewed.access_token, ...withAssertion(await assertion()) })).json()).toEqual({ active: false });
  });
});

describe('private_key_jwt: refused assertions (RFC 7523 section 3)', () => {
  // The answer names no check (it tells an attacker nothing); each case differs from a good
  // assertion, accepted above, in the one claim or header it is about.
  const refusedAsInvalidClient = async (jwt: string) => {
    const answer = await clientCredentials(jwt);
    expect(answer.statusCode).toBe(401);
    expect(answer.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  };

  it('a replayed assertion: its jti is single use, at any endpoint', async () => {
    const once = await assertion();
    expect((await clientCredentials(once)).statusCode).toBe(200);
    await refusedAsInvalidClient(once);
    const introspected = await post('/oauth2/introspect', { token: 'x', ...withAssertion(once) });
    expect(introspected.statusCode).toBe(401);
  });

  it('an aud that is neither the issuer nor the token endpoint', async () => {
    await refusedAsInvalidClient(await assertion({ aud: 'https://other.example.test' }));
    await refusedAsInvalidClient(await assertion({ aud: `${publicUrl}/oauth2/introspect` }));
  });

  it('an expired assertion, one without exp, and one whose exp lies too far ahead', async () => {
    const now = epochSeconds(systemClock);
    await refusedAsInvalidClient(await assertion({ exp: now - 120 }));
    await refusedAsInvalidClient(await assertion({ exp: null }));
    await refusedAsInvalidClient(await assertion({ exp: now + 3600 }));
  });

  it('an assertion without jti', async () => {
    await refusedAsInvalidClient(await assertion({ jti: null }));
  });

  it('iss other than sub, and a sub naming a client without keys', async () => {
    await refusedAsInvalidClient(await assertion({ iss: keyless.apiLoginId }));
    await refusedAsInvalidClient(await assertion({ iss: keyless.apiLoginId, sub: keyless.apiLoginId }));
  });

  it('an unknown kid, and a key of another client', async () => {
    await refusedAsInvalidClient(await assertion({ kid: 'es-9' }));
    const stranger = await keyPair('ES256', 'es-1');
    await refusedAsInvalidClient(await assertion({ key: stranger.privateKey }));
  });

  it('alg none and HS256, whatever their signature, and RS384, an RSA algorithm not allowed, with a registered RSA key', async () => {
    await refusedAsInvalidClient(await assertion({ alg: 'RS384' }));
    await refusedAsInvalidClient(unsignedAssertion('none', ''));
    await refusedAsInvalidClient(unsignedAssertion('HS256', Buffer.from('forged').toString('base64url')));
  });

  it('an assertion beside a secret is two methods: 401 invalid_client', async () => {
    const jwt = await assertion();
    const withBasic = await post('/oauth2/token', { grant_type: 'client_credentials', ...withAssertion(jwt) }, { authorization: `Basic ${Buffer.from(`${client.apiLoginId}:${client.transactionKey}`).toString('base64')}` });
    expect(withBasic.statusCode).toBe(401);
    expect(withBasic.json()).toMatchObject({ error: 'invalid_client' });
    const withPost = await post('/oauth2/token', { grant_type: 'client_credentials', client_secret: client.transactionKey, client_id: client.apiLoginId, ...withAssertion(jwt) });
    expect(withPost.json()).toMatchObject({ error: 'invalid_client' });
    // Refused before the assertion was looked at: its jti is still unspent.
    expect((await clientCredentials(jwt)).statusCode).toBe(200);
  });

  it('another client_assertion_type, or client_assertion without its type, is invalid_client', async () => {
    const jwt = await assertion();
    expect((await post('/oauth2/token', { grant_type: 'client_credentials', client_assertion_type: 'urn:example:saml', client_assertion: jwt })).json()).toMatchObject({ error: 'invalid_client' });
    expect((await post('/oauth2/token', { grant_type: 'client_credentials', client_assertion: jwt })).json()).toMatchObject({ error: 'invalid_client' });
  });
});

describe('set-client-keys: public keys only', () => {
  it('refuses a private JWK, a repeated kid and a key without kid, and --none ends private_key_jwt', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const privateJwk = { ...(await exportJWK(privateKey)), kid: 'es-private' };
    await expect(accounts.setClientKeys(keyless.accountId, { keys: [privateJwk] })).rejects.toThrow(/private key members \(d\)/);
    await expect(accounts.setClientKeys(keyless.accountId, { keys: [es256.publicJwk, es256.publicJwk] })).rejects.toThrow(/repeats the kid/);
    const withoutKid = Object.fromEntries(Object.entries(es256.publicJwk).filter(([member]) => member !== 'kid'));
    await expect(accounts.setClientKeys(keyless.accountId, { keys: [withoutKid] })).rejects.toBeInstanceOf(InvalidAccountInput);
    await expect(accounts.setClientKeys(keyless.accountId, { keys: Array.from({ length: 11 }, (_, index) => ({ ...es256.publicJwk, kid: `k${index}` })) })).rejects.toThrow(/at most 10/);

    const other = await accounts.create({ name: 'Dropped', permissions: ['transaction:charge'], legacy: false });
    await accounts.setClientKeys(other.accountId, { keys: [es256.publicJwk] });
    await tessera.caughtUp();
    const signed = (jti: string) => assertion({ iss: other.apiLoginId, sub: other.apiLoginId, jti });
    expect((await clientCredentials(await signed(randomUUID()))).statusCode).toBe(200);
    await accounts.setClientKeys(other.accountId, { keys: [] });
    await tessera.caughtUp();
    expect((await clientCredentials(await signed(randomUUID()))).statusCode).toBe(401);
  });
});
