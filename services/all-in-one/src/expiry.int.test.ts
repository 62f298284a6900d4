import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService, type CreatedAccount } from '@tessera/accounts';
import { ManualClock, epochSeconds } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * The time-driven rows of the access and refresh tokens' states (docs/interface.md), on the
 * all-in-one as `tessera start` wires it, with short lifetimes, on a clock the test moves: each
 * boundary is checked on both sides without waiting for it. test/e2e/expiry.test.ts lets one access
 * token expire on the real server's clock.
 */
const T = 1_800_000_000;
const clock = new ManualClock(T * 1000);
let tessera: InProcessAllInOne;
let account: CreatedAccount;

beforeAll(async () => {
  tessera = await startInProcess({ clock, env: { TESSERA_ACCESS_TOKEN_TTL: '2', TESSERA_REFRESH_TOKEN_TTL: '4' } });
  account = await createAccountService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(clock), actor: 'test' }).create({
    name: 'Shop',
    permissions: ['transaction:charge'],
    legacy: false,
  });
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

interface Pair {
  readonly token: string;
  readonly refresh_token: string;
  readonly timestamp: string;
  readonly expires: string;
}
const post = (url: string, payload: object) => tessera.app.inject({ method: 'POST', url, payload });
const getPair = async (): Promise<Pair> => (await post('/v5/Authorization/get-oauth-token', { api_login_id: account.apiLoginId, transaction_key: account.transactionKey })).json<Pair>();
const refresh = (pair: Pair) => post('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token });
const charge = (pair: Pair) => tessera.app.inject({ method: 'POST', url: '/v5/Transaction/charge', headers: { authorization: `Bearer ${pair.token}` }, payload: {} });

describe('expiry', () => {
  it('access token valid → expired: valid until `expires`, then protected requests get 401 invalid_token, and the refresh token still renews', async () => {
    const pair = await getPair();
    expect(Date.parse(pair.expires) - Date.parse(pair.timestamp)).toBe(2000);
    expect((await charge(pair)).statusCode).toBe(200);
    clock.set(Date.parse(pair.expires) - 1000);
    expect((await charge(pair)).statusCode).toBe(200);
    clock.set(Date.parse(pair.expires));
    const expired = await charge(pair);
    expect(expired.statusCode).toBe(401);
    expect(expired.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(expired.json<{ detail: string }>().detail).toMatch(/expired/);
    expect((await refresh(pair)).statusCode).toBe(200);
  });

  it('refresh token valid → expired: renews until its lifetime is up, then gets 401, and credentials give a new pair', async () => {
    const [used, kept] = [await getPair(), await getPair()];
    const issuedAt = Date.parse(used.timestamp);
    clock.set(issuedAt + 3000);
    expect((await refresh(used)).statusCode).toBe(200);
    clock.set(issuedAt + 4000);
    const expired = await refresh(kept);
    expect(expired.statusCode).toBe(401);
    expect(expired.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((await charge(await getPair())).statusCode).toBe(200);
  });
});
