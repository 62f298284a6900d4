import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Operator revocation through the real CLI and the real server: `--revoke-tokens` makes a key rotation,
 * a legacy key revocation or a permission change hold for the tokens already issued, v1 ones included.
 * The CLI writes to the log; the server follows it, so "at once" is within a poll of the log (the same
 * second in which it accepts new credentials, as the README says).
 */
let tessera: TesseraProcess;
beforeAll(async () => {
  tessera = await startTessera();
});
afterAll(async () => {
  await tessera?.stop();
});

const withinASecond = { timeout: 1_000, interval: 20 };
const getPair = async (account: Pick<Credentials, 'api_login_id' | 'transaction_key'>) => {
  const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
  expect(answer.status).toBe(200);
  return answer.json() as { token: string; refresh_token: string };
};
const refresh = (refreshToken: string) => tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: refreshToken });
const charge = async (token: string) => (await tessera.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${token}` })).status;
const legacyToken = async (apiid: string, apikey: string) => {
  const answer = await tessera.request('/v1/authenticate', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ apiid, apikey }).toString(),
  });
  expect(answer.status).toBe(200);
  return (answer.json().result as { authentication_token: string }).authentication_token;
};
const v1Account = async (token: string) => (await tessera.request('/v1/account', { headers: { authorization: `Bearer ${token}` } })).status;
const cli = async (args: string[]) => JSON.parse((await tessera.tessera([...args, '--json'])).stdout) as Record<string, unknown>;

describe('accounts rotate-key --revoke-tokens', () => {
  it('the old key\'s access tokens are refused at once; a token of the new key, got right after, works; other accounts are untouched', async () => {
    const account = await tessera.createAccount();
    const other = await tessera.createAccount();
    const before = await getPair(account);
    const othersToken = (await getPair(other)).token;
    expect(await charge(before.token)).toBe(200);

    const rotated = await cli(['accounts', 'rotate-key', '--account', account.account_id, '--revoke-tokens']);
    expect(rotated).toMatchObject({ account_id: account.account_id, api_login_id: account.api_login_id, tokens_revoked_before: expect.stringMatching(/^\d{4}-/) });

    await expect.poll(() => charge(before.token), withinASecond).toBe(401);
    const after = await getPair({ api_login_id: account.api_login_id, transaction_key: String(rotated.transaction_key) });
    expect(await charge(after.token)).toBe(200);
    expect(await charge(othersToken)).toBe(200);
    expect((await refresh(before.refresh_token)).status).toBe(401);
  });
});

describe('accounts revoke-legacy-key --revoke-tokens', () => {
  it('v1 tokens of that API ID are refused at once; those of the account\'s other API ID and its v5 tokens still work', async () => {
    const account = await tessera.createAccount({ legacy: true });
    const second = await cli(['accounts', 'add-legacy-key', '--account', account.account_id]);
    const first = await legacyToken(account.apiid!, account.apikey!);
    await expect.poll(async () => (await tessera.request('/v1/authenticate', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ apiid: String(second.apiid), apikey: String(second.apikey) }).toString(),
    })).status, withinASecond).toBe(200);
    const ofSecondKey = await legacyToken(String(second.apiid), String(second.apikey));
    const v5 = (await getPair(account)).token;
    expect(await v1Account(first)).toBe(200);

    const revoked = await cli(['accounts', 'revoke-legacy-key', '--account', account.account_id, '--apiid', account.apiid!, '--revoke-tokens']);
    expect(revoked.events).toEqual(['LegacyCredentialRevoked', 'CredentialTokensRevoked']);

    await expect.poll(() => v1Account(first), withinASecond).toBe(401);
    expect(await v1Account(ofSecondKey)).toBe(200);
    expect(await charge(v5)).toBe(200);
  });
});

describe('accounts set-permissions --revoke-tokens', () => {
  it('a removed permission is gone at once: the old token is refused, and the refreshed one carries the new scope', async () => {
    const account = await tessera.createAccount({ permissions: ['transaction:charge'] });
    const before = await getPair(account);
    expect(await charge(before.token)).toBe(200);

    const changed = await cli(['accounts', 'set-permissions', '--account', account.account_id, '--permission', 'reports:read', '--revoke-tokens']);
    expect(changed.events).toEqual(['PermissionsChanged', 'AccountTokensRevoked']);

    await expect.poll(() => charge(before.token), withinASecond).toBe(401);
    const refreshed = await refresh(before.refresh_token);
    expect(refreshed.status).toBe(200);
    // Valid, but no longer permitted: 403, not 401.
    expect(await charge((refreshed.json() as { token: string }).token)).toBe(403);
  });

  it('without --revoke-tokens, the token issued before keeps its scope until it expires, as before', async () => {
    const account = await tessera.createAccount({ permissions: ['transaction:charge'] });
    const before = await getPair(account);
    await cli(['accounts', 'set-permissions', '--account', account.account_id, '--permission', 'reports:read']);
    await expect.poll(async () => charge((await getPair(account)).token), withinASecond).toBe(403);
    expect(await charge(before.token)).toBe(200);
  });
});

describe('--revoke-tokens where it does not belong', () => {
  it('is a usage error (exit 2) on a subcommand that does not take it', async () => {
    const account = await tessera.createAccount();
    await expect(tessera.tessera(['accounts', 'add-legacy-key', '--account', account.account_id, '--revoke-tokens'])).rejects.toMatchObject({ code: 2 });
  });
});
