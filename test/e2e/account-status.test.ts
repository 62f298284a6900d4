import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * Disabling and enabling an account as users do it: `tessera start`, then the CLI beside it on the
 * same data folder, or the admin API on the admin listener. The CLI writes to the log and the
 * server follows it, so "at once" is within a poll of the log: the second in which the server
 * accepts new credentials too.
 */
let tessera: TesseraProcess;
beforeAll(async () => {
  tessera = await startTessera();
});
afterAll(async () => {
  await tessera?.stop();
});

const withinASecond = { timeout: 1_000, interval: 20 };
const getToken = (account: Pick<Credentials, 'api_login_id' | 'transaction_key'>) =>
  tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
const getPair = async (account: Credentials) => {
  const answer = await getToken(account);
  expect(answer.status).toBe(200);
  return answer.json() as { token: string; refresh_token: string };
};
const refresh = async (refreshToken: string) => (await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: refreshToken })).status;
const charge = async (token: string) => (await tessera.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${token}` })).status;
const cli = async (args: string[]) => JSON.parse((await tessera.tessera([...args, '--json'])).stdout) as unknown;
const adminToken = async (scope: string) => ((await cli(['admin-tokens', 'create', '--name', scope, '--scope', scope])) as { admin_token: string }).admin_token;
const adminPost = (path: string, token: string, body?: unknown) =>
  tessera.adminRequest(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('tessera accounts disable and enable, beside a running server', () => {
  it('a live token is refused within a second and new gets too; enabling serves new gets, and the old token stays refused; the audit trail shows both', async () => {
    const account = await tessera.createAccount({ permissions: ['transaction:charge'] });
    const other = await tessera.createAccount({ permissions: ['transaction:charge'] });
    const live = await getPair(account);
    const othersToken = (await getPair(other)).token;
    expect(await charge(live.token)).toBe(200);

    const disabled = await cli(['accounts', 'disable', '--account', account.account_id, '--reason', 'card testing']);
    // createAccount got a token too, to see the server accept the account: two live families.
    expect(disabled).toEqual({ account_id: account.account_id, status: 'disabled', changed: true, revoked_families: 2, tokens_revoked_before: expect.stringMatching(/^\d{4}-/) });

    await expect.poll(() => charge(live.token), withinASecond).toBe(401);
    await expect.poll(async () => (await getToken(account)).status, withinASecond).toBe(401);
    expect(await refresh(live.refresh_token)).toBe(401);
    expect(await charge(othersToken)).toBe(200);
    const listed = (await cli(['accounts', 'list'])) as { account_id: string; status: string }[];
    expect(listed.find((row) => row.account_id === account.account_id)?.status).toBe('disabled');
    expect(listed.find((row) => row.account_id === other.account_id)?.status).toBe('enabled');

    expect(await cli(['accounts', 'enable', '--account', account.account_id])).toEqual({ account_id: account.account_id, status: 'enabled', changed: true, revoked_families: 0 });
    await expect.poll(async () => (await getToken(account)).status, withinASecond).toBe(200);
    expect(await charge((await getPair(account)).token)).toBe(200);
    // Enabling brings back nothing the disable revoked.
    expect(await charge(live.token)).toBe(401);
    expect(await refresh(live.refresh_token)).toBe(401);

    const reader = await adminToken('audit:read');
    const trail = async () => {
      const answer = await tessera.adminRequest(`/admin/v1/events?account=${account.account_id}&type=AccountDisabled&type=AccountEnabled`, { headers: { authorization: `Bearer ${reader}` } });
      expect(answer.status).toBe(200);
      return (answer.json().events as { type: string; account_id: string; reason: string | null }[]).map(({ type, account_id, reason }) => ({ type, account_id, reason }));
    };
    // The audit index follows the log on a thread of its own: it may be a moment behind.
    await expect.poll(trail, { timeout: 5_000, interval: 50 }).toEqual([
      { type: 'AccountDisabled', account_id: account.account_id, reason: 'card testing' },
      { type: 'AccountEnabled', account_id: account.account_id, reason: null },
    ]);
  });

  it('the admin API does the same on the admin listener, with an admin token holding accounts:write', async () => {
    const account = await tessera.createAccount({ permissions: ['transaction:charge'] });
    const live = await getPair(account);
    const writer = await adminToken('accounts:write');

    // The CLI wrote the admin token to the log, which the server follows: 401 until it has read it.
    // The families read model starts on first use: 503 with Retry-After until it has caught up.
    const { answer: disabled } = await until(() => adminPost(`/admin/v1/accounts/${account.account_id}/disable`, writer, { reason: 'owner asked' }), 'the admin token to be known', {
      done: (answer) => answer.status !== 401 && !(answer.status === 503 && answer.headers['retry-after'] !== undefined),
      timeoutMs: 30_000,
      everyMs: 50,
    });
    expect(disabled.status).toBe(200);
    expect(disabled.json()).toMatchObject({ status: 'disabled', changed: true, revoked_families: 2 });
    // The server that answered applied the change before answering: no wait.
    expect(await charge(live.token)).toBe(401);
    expect((await getToken(account)).status).toBe(401);

    expect((await adminPost(`/admin/v1/accounts/${account.account_id}/enable`, writer)).json()).toMatchObject({ status: 'enabled', changed: true });
    expect((await getToken(account)).status).toBe(200);
    expect(await charge(live.token)).toBe(401);
  });
});
