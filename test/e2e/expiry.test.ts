import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/** The time-driven rows of the access and refresh tokens' states, walked with short lifetimes on the real server. */
let tessera: TesseraProcess;
let account: Credentials;
beforeAll(async () => {
  tessera = await startTessera({ TESSERA_ACCESS_TOKEN_TTL: '2', TESSERA_REFRESH_TOKEN_TTL: '4' });
  account = await tessera.createAccount();
});
afterAll(async () => {
  await tessera?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const getPair = async () =>
  (
    await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })
  ).json() as { token: string; refresh_token: string; timestamp: string; expires: string };
const charge = (token: string) => tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });

describe('expiry', () => {
  it('access token valid → expired: after `expires` protected requests get 401, and the refresh token still renews', async () => {
    const pair = await getPair();
    expect(Date.parse(pair.expires) - Date.parse(pair.timestamp)).toBe(2000);
    expect((await charge(pair.token)).status).toBe(200);
    await sleep(Date.parse(pair.expires) - Date.now() + 1100);
    const expired = await charge(pair.token);
    expect(expired.status).toBe(401);
    expect(expired.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(expired.json().detail).toMatch(/expired/);
    const renewed = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token });
    expect(renewed.status).toBe(200);
  });

  it('refresh token valid → expired: after its lifetime the refresh token gets 401, and credentials give a new pair', async () => {
    const pair = await getPair();
    await sleep(4000 + 1100);
    const answer = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token });
    expect(answer.status).toBe(401);
    expect((await charge((await getPair()).token)).status).toBe(200);
  });
});
