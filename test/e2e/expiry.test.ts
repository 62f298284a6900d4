import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * An access token expiring on the real server, by the machine's clock: the one expiry here that
 * takes its time (three seconds), as only the real process can show it. The lifetime is three
 * seconds rather than one so that a loaded CI machine still answers the first charge before
 * `expires`: with one second, a get and a charge that together took longer than a second saw 401. Every time-driven row of the
 * token states, each boundary from both sides, is walked on a clock the test moves in
 * services/all-in-one/src/expiry.int.test.ts.
 */
let tessera: TesseraProcess;
let account: Credentials;
beforeAll(async () => {
  tessera = await startTessera({ TESSERA_ACCESS_TOKEN_TTL: '3' });
  account = await tessera.createAccount();
});
afterAll(async () => {
  await tessera?.stop();
});

const getPair = async () =>
  (
    await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })
  ).json() as { token: string; refresh_token: string; timestamp: string; expires: string };
const charge = (token: string) => tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });

describe('expiry on the real server', () => {
  it('access token valid → expired: once `expires` has passed, protected requests get 401, and the refresh token still renews', async () => {
    const pair = await getPair();
    expect(Date.parse(pair.expires) - Date.parse(pair.timestamp)).toBe(3000);
    expect((await charge(pair.token)).status).toBe(200);
    // Asked again until refused: the answer comes as soon as the server's clock passes `expires`.
    await expect.poll(async () => (await charge(pair.token)).status, { timeout: 10_000, interval: 100 }).toBe(401);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(pair.expires));
    const expired = await charge(pair.token);
    expect(expired.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(expired.json().detail).toMatch(/expired/);
    const renewed = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token });
    expect(renewed.status).toBe(200);
  });
});
