import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsFetch, type HttpsFetch } from '../support/https-fetch.js';
import { until } from '../support/until.js';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * DPoP (RFC 9449) at the token endpoint of `tessera start`, with nonces required
 * (TESSERA_DPOP_NONCE=required): openid-client's DPoP handle end to end, then raw proofs made
 * with jose for each MUST the endpoint enforces.
 */
let tessera: TesseraProcess;
let shop: Credentials;
let strict: Credentials;
let caFetch: HttpsFetch;
let issuer: string;
let tokenEndpoint: string;

beforeAll(async () => {
  tessera = await startTessera({ TESSERA_DPOP_NONCE: 'required' });
  shop = await tessera.createAccount({ name: 'Shop', permissions: ['transaction:charge'] });
  strict = await tessera.createAccount({ name: 'Strict', permissions: ['transaction:charge'] });
  caFetch = httpsFetch(readFileSync(join(tessera.dataDir, 'tls', 'self-signed.crt')));
  issuer = `https://127.0.0.1:${new URL(tessera.baseUrl).port}`;
  tokenEndpoint = `${issuer}/oauth2/token`;
});
afterAll(async () => {
  await tessera?.stop();
});

async function configure(account: Credentials): Promise<client.Configuration> {
  // openid-client's custom fetch takes (url, options): the test's fetch trusts the server's own certificate.
  const customFetch = (url: string, options: client.CustomFetchOptions) => caFetch(url, options as RequestInit);
  const config = await client.discovery(new URL(issuer), account.api_login_id, undefined, client.ClientSecretBasic(account.transaction_key), {
    algorithm: 'oauth2',
    [client.customFetch]: customFetch,
  });
  config[client.customFetch] = customFetch;
  return config;
}

interface ProofKey {
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
  readonly jkt: string;
}
async function proofKey(): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}
const proof = (key: ProofKey, claims: Record<string, unknown> = {}) =>
  new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: tokenEndpoint, iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk })
    .sign(key.privateKey);

const basic = (account: Credentials) => `Basic ${Buffer.from(`${account.api_login_id}:${account.transaction_key}`).toString('base64')}`;
const tokenRequest = (account: Credentials, form: Record<string, string>, dpop?: string) =>
  tessera.request('/oauth2/token', {
    method: 'POST',
    headers: { authorization: basic(account), 'content-type': 'application/x-www-form-urlencoded', ...(dpop === undefined ? {} : { dpop }) },
    body: new URLSearchParams(form).toString(),
  });
/** The nonce the server gives out now: any answer of the token endpoint carries it. */
async function currentNonce(): Promise<string> {
  const answer = await tokenRequest(shop, { grant_type: 'client_credentials' }, 'not-a-proof');
  const nonce = answer.headers['dpop-nonce'];
  expect(typeof nonce).toBe('string');
  return nonce as string;
}

describe('DPoP at the token endpoint, nonces required', () => {
  it('openid-client: client_credentials and a refresh with a DPoP handle give DPoP-bound tokens; the bound refresh token is refused without its key', async () => {
    const config = await configure(shop);
    expect(config.serverMetadata().dpop_signing_alg_values_supported).toEqual(['ES256', 'RS256', 'PS256', 'EdDSA']);
    const keyPair = await client.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey), 'sha256');
    const dpop = client.getDPoPHandle(config, keyPair);

    // The first request has no nonce: the server answers use_dpop_nonce and openid-client retries with it.
    const tokens = await client.clientCredentialsGrant(config, { scope: 'transaction:charge' }, { DPoP: dpop });
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token)).toMatchObject({ cnf: { jkt }, iss: issuer });

    const renewed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop });
    expect(renewed.token_type).toBe('dpop');
    expect(decodeJwt(renewed.access_token)).toMatchObject({ cnf: { jkt }, gen: 1 });

    // The family is bound: its refresh token works only at the token endpoint, with a proof of its key.
    const atV5 = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: renewed.refresh_token });
    expect(atV5.status).toBe(401);
    expect(atV5.json()).toMatchObject({ detail: expect.stringContaining('DPoP-bound') });
    const otherKey = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    await expect(client.refreshTokenGrant(config, renewed.refresh_token!, undefined, { DPoP: otherKey })).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    await expect(client.refreshTokenGrant(config, renewed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    // Refused without a change: the right key still refreshes.
    const again = await client.refreshTokenGrant(config, renewed.refresh_token!, undefined, { DPoP: dpop });
    expect(decodeJwt(again.access_token)).toMatchObject({ cnf: { jkt }, gen: 2 });

    // At a resource server (the example route's DPoP check), through openid-client's own protected-resource request.
    const charge = (token: string, handle?: client.DPoPHandle) =>
      client.fetchProtectedResource(config, token, new URL(`${issuer}/v5/Transaction/charge`), 'POST', '{}', new Headers({ 'content-type': 'application/json' }), handle === undefined ? undefined : { DPoP: handle });
    expect((await charge(again.access_token, dpop)).status).toBe(200);
    // The bound token as a bearer token, or with another key's proof: refused.
    await expect(charge(again.access_token)).rejects.toMatchObject({ status: 401 });
    await expect(charge(again.access_token, otherKey)).rejects.toMatchObject({ status: 401 });

    // Introspection shows the binding (RFC 9449 section 6.2).
    const introspected = await client.tokenIntrospection(config, again.access_token);
    expect(introspected).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt } });
  });

  it('asks for a nonce, and takes a proof with the one it gave out', async () => {
    const key = await proofKey();
    const without = await tokenRequest(shop, { grant_type: 'client_credentials' }, await proof(key));
    expect(without.status).toBe(400);
    expect(without.json()).toMatchObject({ error: 'use_dpop_nonce' });
    const nonce = without.headers['dpop-nonce'] as string;
    expect(nonce).toMatch(/^\d+\.[A-Za-z0-9_-]{22}$/);
    const forged = await tokenRequest(shop, { grant_type: 'client_credentials' }, await proof(key, { nonce: `${nonce.split('.')[0]}.${'A'.repeat(22)}` }));
    expect(forged.json()).toMatchObject({ error: 'use_dpop_nonce' });
    const taken = await tokenRequest(shop, { grant_type: 'client_credentials' }, await proof(key, { nonce }));
    expect(taken.status).toBe(200);
    expect(taken.json()).toMatchObject({ token_type: 'DPoP' });
    expect(decodeJwt(taken.json().access_token as string).cnf).toEqual({ jkt: key.jkt });
  });

  it('refuses a replayed, mismatched, stale or malformed proof with invalid_dpop_proof, issuing nothing', async () => {
    const key = await proofKey();
    const nonce = await currentNonce();
    const once = await proof(key, { nonce });
    expect((await tokenRequest(shop, { grant_type: 'client_credentials' }, once)).status).toBe(200);
    const cases: Array<[string, string]> = [
      ['a replay', once],
      ['another method', await proof(key, { nonce, htm: 'GET' })],
      ['another URL', await proof(key, { nonce, htu: `${issuer}/oauth2/introspect` })],
      ['an iat two minutes old', await proof(key, { nonce, iat: Math.floor(Date.now() / 1000) - 121 - 60 })],
      ['an iat ahead of the clock', await proof(key, { nonce, iat: Math.floor(Date.now() / 1000) + 120 })],
      ['no jti', await proof(key, { nonce, jti: undefined })],
      ['not a JWT', 'a.b'],
    ];
    for (const [what, dpop] of cases) {
      const answer = await tokenRequest(shop, { grant_type: 'client_credentials' }, dpop);
      expect({ what, status: answer.status, error: answer.json().error }).toEqual({ what, status: 400, error: 'invalid_dpop_proof' });
      expect(answer.headers['cache-control']).toBe('no-store');
    }
    const twoHeaders = await tessera.request('/oauth2/token', {
      method: 'POST',
      headers: { authorization: basic(shop), 'content-type': 'application/x-www-form-urlencoded', dpop: `${await proof(key, { nonce })}, ${await proof(key, { nonce })}` },
      body: 'grant_type=client_credentials',
    });
    expect(twoHeaders.json()).toMatchObject({ error: 'invalid_dpop_proof' });
  });

  it('a bearer family refreshed with a proof gets a bound access token, its refresh token still a bearer one', async () => {
    const issued = await tokenRequest(strict, { grant_type: 'client_credentials' });
    expect(issued.json()).toMatchObject({ token_type: 'Bearer' });
    const key = await proofKey();
    const refreshed = await tokenRequest(strict, { grant_type: 'refresh_token', refresh_token: issued.json().refresh_token as string }, await proof(key, { nonce: await currentNonce() }));
    expect(refreshed.json()).toMatchObject({ token_type: 'DPoP' });
    expect(decodeJwt(refreshed.json().access_token as string).cnf).toEqual({ jkt: key.jkt });
    const atV5 = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: refreshed.json().refresh_token });
    expect(atV5.status).toBe(200);
  });

  it('an account set to require DPoP (dpop_bound_access_tokens) gets no bearer token; set back to optional, it does', async () => {
    const set = async (flag: '--required' | '--optional') => JSON.parse((await tessera.tessera(['accounts', 'set-dpop', '--account', strict.account_id, flag, '--json'])).stdout) as Record<string, unknown>;
    // Neither flag, or both, is refused: requiring DPoP is said outright.
    await expect(tessera.tessera(['accounts', 'set-dpop', '--account', strict.account_id])).rejects.toMatchObject({ stderr: expect.stringContaining('--required') });
    await expect(tessera.tessera(['accounts', 'set-dpop', '--account', strict.account_id, '--required', '--optional'])).rejects.toMatchObject({ code: 2 });
    expect(await set('--required')).toMatchObject({ account_id: strict.account_id, dpop_bound_access_tokens: true, events: ['ClientDpopSet'] });
    // The server folds the account event from the log a moment after the CLI appended it.
    const { answer: refused } = await until(() => tokenRequest(strict, { grant_type: 'client_credentials' }), 'a bearer token request refused', { done: (answer) => answer.status === 400 });
    expect(refused.json()).toMatchObject({ error: 'invalid_dpop_proof', error_description: expect.stringContaining('must send a DPoP proof') });
    const key = await proofKey();
    const bound = await tokenRequest(strict, { grant_type: 'client_credentials' }, await proof(key, { nonce: await currentNonce() }));
    expect(bound.json()).toMatchObject({ token_type: 'DPoP' });

    expect(await set('--optional')).toMatchObject({ dpop_bound_access_tokens: false });
    const { answer: bearer } = await until(() => tokenRequest(strict, { grant_type: 'client_credentials' }), 'a bearer token issued again', { done: (answer) => answer.status === 200 });
    expect(bearer.json()).toMatchObject({ token_type: 'Bearer' });
  });
});
