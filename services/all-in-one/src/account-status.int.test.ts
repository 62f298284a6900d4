import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createAccountService, type CreatedAccount } from '@tessera/accounts';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { streams } from '@tessera/events';
import { epochSeconds, systemClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';
import { until } from '../../../test/support/until.js';

/**
 * Disabling and enabling an account through the admin API, in the all-in-one as `tessera start`
 * wires it. Once set up, the log no longer reaches the process's read models of accounts, keys and
 * cuts (the store holds back their deliveries): each refusal right after a disable proves the
 * answer handed its status change, cut and family revocations to this process before it was sent.
 */
let tessera: InProcessAllInOne;
let shop: CreatedAccount;
let other: CreatedAccount;
let gateway: CreatedAccount;
const admin = { writer: { id: '', token: '' }, reader: { id: '', token: '' } };

beforeAll(async () => {
  tessera = await startInProcess({ env: { TESSERA_ISSUER: 'urn:tessera:test' } });
  const accounts = createAccountService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'test' });
  shop = await accounts.create({ name: 'Shop', permissions: ['transaction:charge'], legacy: true });
  other = await accounts.create({ name: 'Other', permissions: ['transaction:charge'], legacy: false });
  gateway = await accounts.create({ name: 'Gateway', permissions: ['tessera:introspect'], legacy: false });
  const adminTokens = createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'cli' });
  for (const [which, scopes] of [
    ['writer', ['accounts:write']],
    ['reader', ['accounts:read', 'tokens:revoke']],
  ] as const) {
    const created = await adminTokens.create({ name: which, scopes });
    admin[which] = { id: created.id, token: created.adminToken };
  }
  await tessera.caughtUp();
  // The admin API's families read model (it follows TokenIssued) and the audit index still read the log.
  tessera.store.hold((subscription) => subscription.types !== undefined && !subscription.types.includes('TokenIssued'));
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

const adminPost = (url: string, adminToken: string, payload?: unknown) =>
  tessera.admin.inject({
    method: 'POST',
    url,
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload), headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' } }),
    ...(payload === undefined ? { headers: { authorization: `Bearer ${adminToken}` } } : {}),
  });
/** The families read model starts on first use at the lowest CPU priority: a 503 with Retry-After is asked again, as a client would. */
const disable = async (accountId: string, payload?: unknown) =>
  (
    await until(() => adminPost(`/admin/v1/accounts/${accountId}/disable`, admin.writer.token, payload), 'the disable to be answered', {
      done: (reply) => reply.statusCode !== 503 || reply.headers['retry-after'] === undefined,
      timeoutMs: 30_000,
      everyMs: 200,
    })
  ).answer;
const enable = (accountId: string) => adminPost(`/admin/v1/accounts/${accountId}/enable`, admin.writer.token);

const getToken = (client: CreatedAccount, transactionKey = client.transactionKey) =>
  tessera.app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: client.apiLoginId, transaction_key: transactionKey } });
const getPair = async (client: CreatedAccount) => {
  const answer = await getToken(client);
  expect(answer.statusCode).toBe(200);
  return answer.json<{ token: string; refresh_token: string }>();
};
const refresh = (refreshToken: string) => tessera.app.inject({ method: 'POST', url: '/v5/Authorization/refresh-oauth-token', payload: { refresh_token: refreshToken } });
const authenticate = (apiId: string, apiKey: string) =>
  tessera.app.inject({ method: 'POST', url: '/v1/authenticate', payload: `apiid=${apiId}&apikey=${apiKey}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
const legacyToken = async () => {
  const answer = await authenticate(shop.legacy!.apiId, shop.legacy!.apiKey);
  expect(answer.statusCode).toBe(200);
  return answer.json<{ result: { authentication_token: string } }>().result.authentication_token;
};
const basic = (client: CreatedAccount, secret = client.transactionKey) => `Basic ${Buffer.from(`${encodeURIComponent(client.apiLoginId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const oauth = (url: string, fields: Record<string, string>, authorization: string) =>
  tessera.app.inject({ method: 'POST', url, payload: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', authorization } });
const charge = (token: string) =>
  tessera.app.inject({ method: 'POST', url: '/v5/Transaction/charge', payload: '{}', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
const legacyAccount = (token: string) => tessera.app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${token}` } });
const forwardAuth = (token: string) => tessera.app.inject({ method: 'GET', url: '/forward-auth?permission=transaction:charge', headers: { authorization: `Bearer ${token}` } });
const introspect = async (token: string) => (await oauth('/oauth2/introspect', { token }, basic(gateway))).json<{ active: boolean }>();
/** What a client learns: the status and the body, without the request id that differs on every answer. */
const refusalOf = (answer: LightMyRequestResponse) => ({ status: answer.statusCode, body: answer.body.replace(/"(request_id|requestId|instance)":"[^"]*"/g, '') });

describe('POST /admin/v1/accounts/{account_id}/disable', () => {
  it("refuses the account's live tokens at once everywhere this process checks one, and its refreshes and token requests as a wrong key is refused", async () => {
    const live = await getPair(shop);
    const oauthPair = (await oauth('/oauth2/token', { grant_type: 'client_credentials' }, basic(shop))).json<{ access_token: string; refresh_token: string }>();
    const v1 = await legacyToken();
    const others = await getPair(other);
    expect((await charge(live.token)).statusCode).toBe(200);
    expect((await forwardAuth(live.token)).statusCode).toBe(200);
    expect(await introspect(oauthPair.access_token)).toMatchObject({ active: true });
    // How a wrong key is answered, before the disable: a disabled account is answered the same.
    const wrongKey = refusalOf(await getToken(shop, `${shop.transactionKey}x`));
    const wrongLegacyKey = refusalOf(await authenticate(shop.legacy!.apiId, `${shop.legacy!.apiKey}x`));
    const wrongSecret = refusalOf(await oauth('/oauth2/token', { grant_type: 'client_credentials' }, basic(shop, 'wrong')));

    const answer = await disable(shop.accountId, { reason: 'chargebacks' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.json()).toEqual({ account_id: shop.accountId, status: 'disabled', changed: true, revoked_families: 2, tokens_revoked_before: expect.any(String) });

    // No wait: the status, the cut and the family revocations reached this process before the answer.
    for (const token of [live.token, oauthPair.access_token]) expect((await charge(token)).statusCode).toBe(401);
    expect((await forwardAuth(live.token)).statusCode).toBe(401);
    expect((await legacyAccount(v1)).statusCode).toBe(401);
    expect(await introspect(oauthPair.access_token)).toEqual({ active: false });
    expect(await introspect(oauthPair.refresh_token)).toEqual({ active: false });
    expect(refusalOf(await getToken(shop))).toEqual(wrongKey);
    expect(wrongKey.status).toBe(401);
    expect(refusalOf(await authenticate(shop.legacy!.apiId, shop.legacy!.apiKey))).toEqual(wrongLegacyKey);
    expect(refusalOf(await oauth('/oauth2/token', { grant_type: 'client_credentials' }, basic(shop)))).toEqual(wrongSecret);
    expect((await refresh(live.refresh_token)).statusCode).toBe(401);
    const oauthRefresh = await oauth('/oauth2/token', { grant_type: 'refresh_token', refresh_token: oauthPair.refresh_token }, basic(shop));
    // The client no longer authenticates, so RFC 6749 section 5.2's answer for it: invalid_client.
    expect(oauthRefresh.statusCode).toBe(401);
    expect(oauthRefresh.json()).toMatchObject({ error: 'invalid_client' });
    // Another account keeps its tokens and gets new ones.
    expect((await charge(others.token)).statusCode).toBe(200);
    expect((await getToken(other)).statusCode).toBe(200);

    const [disabled, cut] = (await tessera.store.readStream(streams.account(shop.accountId))).slice(-2);
    expect(disabled?.event).toEqual({ type: 'AccountDisabled', v: 1, accountId: shop.accountId, reason: 'chargebacks', actor: `admin:${admin.writer.id}`, at: expect.any(Number) });
    expect(disabled?.metadata).toMatchObject({ actor: `admin:${admin.writer.id}`, sourceAddress: '127.0.0.1', accountId: shop.accountId });
    expect(cut?.event).toMatchObject({ type: 'AccountTokensRevoked', reason: 'account-disabled' });
  });

  it('a second disable records nothing and revokes nothing more; the account stays refused', async () => {
    const before = await tessera.store.headPosition();
    const answer = await disable(shop.accountId);
    expect(answer.json()).toEqual({ account_id: shop.accountId, status: 'disabled', changed: false, revoked_families: 0 });
    expect(await tessera.store.headPosition()).toBe(before);
    expect((await getToken(shop)).statusCode).toBe(401);
  });

  it('an unknown account is 404, a bad body 400, a token without accounts:write 403, all problem+json and appending nothing', async () => {
    const before = await tessera.store.headPosition();
    const expectProblem = (reply: LightMyRequestResponse, status: number) => {
      expect(reply.statusCode).toBe(status);
      expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
    };
    expectProblem(await disable('no-such-account'), 404);
    expectProblem(await enable('no-such-account'), 404);
    expectProblem(await adminPost(`/admin/v1/accounts/${other.accountId}/disable`, admin.writer.token, { reason: '' }), 400);
    expectProblem(await adminPost(`/admin/v1/accounts/${other.accountId}/disable`, admin.writer.token, { why: 'typo' }), 400);
    expectProblem(await adminPost(`/admin/v1/accounts/${other.accountId}/disable`, admin.writer.token, { reason: 'r'.repeat(201) }), 400);
    const forbidden = await adminPost(`/admin/v1/accounts/${other.accountId}/disable`, admin.reader.token);
    expectProblem(forbidden, 403);
    expect(forbidden.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="accounts:write"');
    expectProblem(await enable(other.accountId).then(() => adminPost(`/admin/v1/accounts/${other.accountId}/enable`, admin.reader.token)), 403);
    expect(await tessera.store.headPosition()).toBe(before);
  });
});

describe('POST /admin/v1/accounts/{account_id}/enable', () => {
  it('serves new token requests again; tokens and families from before the disable stay refused', async () => {
    const stale = (await tessera.store.readAll({ types: ['TokenRevoked'] })).filter((r) => r.event.type === 'TokenRevoked' && r.event.accountId === shop.accountId);
    expect(stale.length).toBeGreaterThan(0);
    const answer = await enable(shop.accountId);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ account_id: shop.accountId, status: 'enabled', changed: true, revoked_families: 0 });
    const last = (await tessera.store.readStream(streams.account(shop.accountId))).at(-1);
    expect(last?.event).toEqual({ type: 'AccountEnabled', v: 1, accountId: shop.accountId, actor: `admin:${admin.writer.id}`, at: expect.any(Number) });

    // In this same second: the new token is dated at the cut, so the cut does not refuse it.
    const fresh = await getPair(shop);
    expect((await charge(fresh.token)).statusCode).toBe(200);
    expect((await refresh(fresh.refresh_token)).statusCode).toBe(200);
    expect((await legacyAccount(await legacyToken())).statusCode).toBe(200);
    expect((await enable(shop.accountId)).json()).toMatchObject({ changed: false });
  });
});
