import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundToKey, dpopClient } from '../support/dpop.js';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/** Spec 3.1 and 3.2 row by row, over HTTPS against the real all-in-one server. */
let tessera: TesseraProcess;
let account: Credentials;

beforeAll(async () => {
  tessera = await startTessera();
  account = await tessera.createAccount();
});
afterAll(async () => {
  await tessera?.stop();
});

interface Pair {
  timestamp: string;
  token: string;
  refresh_token: string;
  expires: string;
}

async function getToken(credentials: Credentials = account): Promise<Pair> {
  const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', {
    api_login_id: credentials.api_login_id,
    transaction_key: credentials.transaction_key,
  });
  expect(answer.status).toBe(200);
  return answer.json() as unknown as Pair;
}
const refresh = (refreshToken: string) => tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: refreshToken });
const revoke = (refreshToken: string) => tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: refreshToken });
const charge = (token: string) =>
  tessera.request('/v5/Transaction/charge', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{"amount":"1.00"}',
  });
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
const headerOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;

/** RFC 6750 3.1: a request with no credentials gets a bare `Bearer` challenge (and RFC 9449's `DPoP` one), a bad token `invalid_token`. */
function expectUnauthorized(answer: Awaited<ReturnType<typeof charge>>, challenge = 'Bearer error="invalid_token"') {
  expect(answer.status).toBe(401);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers['www-authenticate']).toBe(challenge);
  expect(answer.json()).toMatchObject({ status: 401, title: 'Unauthorized' });
}

/** Refresh and revoke take the refresh token in the body, not a bearer header: 401 without a Bearer challenge. */
function expectRefusedWithoutChallenge(answer: Awaited<ReturnType<typeof charge>>) {
  expect(answer.status).toBe(401);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers['www-authenticate']).toBeUndefined();
  expect(answer.json()).toMatchObject({ status: 401, title: 'Unauthorized' });
}

describe('access token states, current interface', () => {
  it('(none) → valid: get-oauth-token with valid credentials issues an access token and a refresh token', async () => {
    const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', {
      api_login_id: account.api_login_id,
      transaction_key: account.transaction_key,
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    const pair = answer.json() as unknown as Pair;
    expect(Object.keys(pair).sort()).toEqual(['expires', 'refresh_token', 'timestamp', 'token']);
    expect(new Date(pair.timestamp).toISOString()).toBe(pair.timestamp);
    expect(pair.refresh_token.length).toBeGreaterThan(40);
    expect((await charge(pair.token)).status).toBe(200);
  });

  it('valid → expired: the token expires 60 minutes after issue, at `expires`', async () => {
    const pair = await getToken();
    expect(Date.parse(pair.expires) - Date.parse(pair.timestamp)).toBe(60 * 60 * 1000);
    const claims = claimsOf(pair.token);
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);
    expect(Number(claims.exp) * 1000).toBe(Date.parse(pair.expires));
    // The time-driven transition itself is walked with short lifetimes in expiry.test.ts.
  });

  it('valid → invalid (replaced) by refresh-oauth-token: the prior access token gets 401', async () => {
    const pair = await getToken();
    expect((await charge(pair.token)).status).toBe(200);
    const refreshed = await refresh(pair.refresh_token);
    expect(refreshed.status).toBe(200);
    expectUnauthorized(await charge(pair.token));
    expect((await charge(String(refreshed.json().token))).status).toBe(200);
  });

  it('valid → invalid by revoke-oauth-token: protected requests get 401', async () => {
    const pair = await getToken();
    expect((await charge(pair.token)).status).toBe(200);
    const revoked = await revoke(pair.refresh_token);
    expect(revoked.status).toBe(200);
    expectUnauthorized(await charge(pair.token));
  });
});

describe('refresh token states, current interface', () => {
  it('(none) → valid by get-oauth-token', async () => {
    const pair = await getToken();
    expect((await refresh(pair.refresh_token)).status).toBe(200);
  });

  it('(none) → valid by refresh-oauth-token: both token and refresh_token are new, and the new one refreshes', async () => {
    const pair = await getToken();
    const first = await refresh(pair.refresh_token);
    expect(first.status).toBe(200);
    const next = first.json() as unknown as Pair;
    expect(next.token).not.toBe(pair.token);
    expect(next.refresh_token).not.toBe(pair.refresh_token);
    expect(first.headers['cache-control']).toBe('no-store');
    const second = await refresh(next.refresh_token);
    expect(second.status).toBe(200);
  });

  it('valid → used by refresh-oauth-token: its access token becomes invalid and it cannot refresh again', async () => {
    const pair = await getToken();
    expect((await refresh(pair.refresh_token)).status).toBe(200);
    expectUnauthorized(await charge(pair.token));
    expectRefusedWithoutChallenge(await refresh(pair.refresh_token));
  });

  it('valid → revoked by revoke-oauth-token: its access token becomes invalid', async () => {
    const pair = await getToken();
    expect((await revoke(pair.refresh_token)).status).toBe(200);
    expectUnauthorized(await charge(pair.token));
  });

  it('used → unchanged: refresh answers 401 every time, and the successor pair still works', async () => {
    const pair = await getToken();
    const successor = (await refresh(pair.refresh_token)).json() as unknown as Pair;
    expectRefusedWithoutChallenge(await refresh(pair.refresh_token));
    expectRefusedWithoutChallenge(await refresh(pair.refresh_token));
    expect((await charge(successor.token)).status).toBe(200);
    expect((await refresh(successor.refresh_token)).status).toBe(200);
  });

  it('revoked → unchanged: refresh answers 401, and so does a second revoke', async () => {
    const pair = await getToken();
    expect((await revoke(pair.refresh_token)).status).toBe(200);
    expectRefusedWithoutChallenge(await refresh(pair.refresh_token));
    expectRefusedWithoutChallenge(await revoke(pair.refresh_token));
  });

  it('a revoked pair needs the API Login ID and Transaction Key again', async () => {
    const pair = await getToken();
    await revoke(pair.refresh_token);
    const fresh = await getToken();
    expect((await charge(fresh.token)).status).toBe(200);
  });
});

describe('access token format (docs/interface.md)', () => {
  it('is an RFC 9068 JWT with typ at+jwt, a kid published in the JWKS, and the family claims', async () => {
    const pair = await getToken();
    const header = headerOf(pair.token);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    const jwks = (await tessera.request('/.well-known/jwks.json')).json() as { keys: { kid: string; d?: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
    expect(jwks.keys.every((k) => k.d === undefined)).toBe(true);
    const claims = claimsOf(pair.token);
    expect(Object.keys(claims).sort()).toEqual(['aud', 'client_id', 'exp', 'fid', 'gen', 'iat', 'iss', 'jti', 'scope', 'sub'].sort());
    expect(claims).toMatchObject({ sub: account.account_id, client_id: account.api_login_id, scope: 'transaction:charge', gen: 0 });
    const refreshed = (await refresh(pair.refresh_token)).json() as unknown as Pair;
    expect(claimsOf(refreshed.token)).toMatchObject({ fid: claims.fid, gen: 1 });
  });
});

describe('protected requests', () => {
  it('403 when the token is valid but the account lacks the permission', async () => {
    const readOnly = await tessera.createAccount({ permissions: ['reports:read'] });
    const pair = await getToken(readOnly);
    const answer = await charge(pair.token);
    expect(answer.status).toBe(403);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('401 without a token, with another scheme, or with a forged token', async () => {
    expectUnauthorized(await tessera.request('/v5/Transaction/charge', { method: 'POST' }), 'Bearer, DPoP algs="ES256 RS256 PS256 EdDSA"');
    const pair = await getToken();
    expectUnauthorized(await tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { authorization: `Basic ${pair.token}` } }), 'Bearer, DPoP algs="ES256 RS256 PS256 EdDSA"');
    const [h, p] = pair.token.split('.');
    expectUnauthorized(await charge(`${h}.${p}.${'A'.repeat(86)}`));
  });

  it('accepts the bearer scheme in any case', async () => {
    const pair = await getToken();
    const answer = await tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `bEaReR ${pair.token}` }, body: '{}' });
    expect(answer.status).toBe(200);
  });

  it('takes a DPoP-bound token (RFC 9449) with a proof for the URL it was called at, once; refuses it as a bearer token and after a revoke', async () => {
    const client = await dpopClient();
    const pair = await getToken();
    const token = boundToKey(pair.token, client.jkt, tessera.dataDir);
    const url = `${tessera.baseUrl}/v5/Transaction/charge`;
    const dpopCharge = (proof: string, authorization = `DPoP ${token}`) =>
      tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization, dpop: proof }, body: '{}' });
    const proof = await client.proof('POST', url, token);
    const answer = await dpopCharge(proof);
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ accepted: true, account_id: account.account_id });
    const algs = 'algs="ES256 RS256 PS256 EdDSA"';
    expectUnauthorized(await dpopCharge(proof), `DPoP error="invalid_dpop_proof", error_description="the DPoP proof was used before (its jti is single use)", ${algs}`);
    expectUnauthorized(await charge(token), `Bearer error="invalid_token", DPoP ${algs}`);
    expectUnauthorized(await dpopCharge(await client.proof('GET', url, token)), `DPoP error="invalid_dpop_proof", error_description="the DPoP proof's htm is not this request's method", ${algs}`);
    expect((await revoke(pair.refresh_token)).status).toBe(200);
    expectUnauthorized(await dpopCharge(await client.proof('POST', url, token)), `DPoP error="invalid_token", error_description="the access token was revoked or replaced by a refresh", ${algs}`);
  });
});
