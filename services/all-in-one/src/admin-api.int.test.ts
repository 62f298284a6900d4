import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { streams, type AccountEvent } from '@tessera/events';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { epochSeconds, systemClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';
import { until } from '../../../test/support/until.js';

/**
 * The admin API's routes through inject(), in the all-in-one as `tessera start` wires it: the
 * public listener's app and the admin listener's, one process, one store. Once set up, the log no
 * longer reaches the verifier's read models (the store holds back their deliveries, as if their
 * follower lagged): each refusal right after an admin answer below proves the answer handed its
 * family events and cuts to this process's verifier before it was sent.
 */
let tessera: InProcessAllInOne;
let app: FastifyInstance;
let adminApp: FastifyInstance;
/** tokens:revoke, audit:read only, and one revoked. */
const admin = { revoker: { id: '', token: '' }, reader: { id: '', token: '' }, revoked: { id: '', token: '' } };

async function register(accountId: string, credentials: { apiLoginId: string; transactionKey: string; apiId?: string; apiKey?: string }) {
  const at = epochSeconds(systemClock);
  const { hasher } = tessera;
  const events: AccountEvent[] = [
    { type: 'AccountRegistered', v: 1, accountId, name: `Shop ${accountId}`, permissions: ['transaction:charge'], at },
    { type: 'ApiCredentialIssued', v: 1, accountId, credentialId: `${accountId}-v5`, apiLoginId: credentials.apiLoginId, transactionKeyHash: hasher.hash(credentials.transactionKey), at },
  ];
  if (credentials.apiId && credentials.apiKey) {
    events.push({ type: 'LegacyCredentialIssued', v: 1, accountId, credentialId: `${accountId}-v1`, apiId: credentials.apiId, apiKeyHash: hasher.hash(credentials.apiKey), at });
  }
  await tessera.store.append(streams.account(accountId), events.map((event) => ({ event })), { expectedRevision: 'no_stream' });
}

beforeAll(async () => {
  tessera = await startInProcess({ env: { TESSERA_ISSUER: 'urn:tessera:test', TESSERA_REFRESH_TOKEN_TTL: '86400' } });
  ({ app, admin: adminApp } = tessera);
  await register('acct-a', { apiLoginId: 'tsl_a', transactionKey: 'tsk_a', apiId: 'tla_a', apiKey: 'tlk_a' });
  await register('acct-b', { apiLoginId: 'tsl_b', transactionKey: 'tsk_b' });
  await register('acct-c', { apiLoginId: 'tsl_c', transactionKey: 'tsk_c', apiId: 'tla_c', apiKey: 'tlk_c' });
  const adminTokens = createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'cli' });
  for (const [which, scopes] of [
    ['revoker', ['tokens:revoke']],
    ['reader', ['audit:read']],
    ['revoked', ['tokens:revoke', 'audit:read']],
  ] as const) {
    const created = await adminTokens.create({ name: which, scopes });
    admin[which] = { id: created.id, token: created.adminToken };
  }
  await adminTokens.revoke(admin.revoked.id);
  await tessera.caughtUp();
  // From here on the verifier hears of rotations, revocations and cuts only from what this process
  // hands it: the follower of keys, accounts and cuts, and the revocation follower, are held. The
  // admin API's families read model (it follows TokenIssued) and the audit index still read the log.
  tessera.store.hold((subscription) => subscription.types !== undefined && !subscription.types.includes('TokenIssued'));
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

const post = (url: string, adminToken?: string, extra: { headers?: Record<string, string>; payload?: string } = {}) =>
  adminApp.inject({ method: 'POST', url, payload: extra.payload, headers: { ...(adminToken === undefined ? {} : { authorization: `Bearer ${adminToken}` }), ...extra.headers } });
const getPair = async (apiLoginId = 'tsl_a', transactionKey = 'tsk_a') => {
  const answer = await app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: apiLoginId, transaction_key: transactionKey } });
  expect(answer.statusCode).toBe(200);
  return answer.json<{ token: string; refresh_token: string }>();
};
const refresh = (refreshToken: string) => app.inject({ method: 'POST', url: '/v5/Authorization/refresh-oauth-token', payload: { refresh_token: refreshToken } });
const charge = (token: string) =>
  app.inject({ method: 'POST', url: '/v5/Transaction/charge', payload: '{}', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
const legacyToken = async (apiId = 'tla_c', apiKey = 'tlk_c') => {
  const answer = await app.inject({ method: 'POST', url: '/v1/authenticate', payload: `apiid=${apiId}&apikey=${apiKey}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  expect(answer.statusCode).toBe(200);
  return answer.json<{ result: { authentication_token: string } }>().result.authentication_token;
};
const legacyAccount = (token: string) => app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${token}` } });
const familyOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { fid: string }).fid;

function expectProblem(answer: LightMyRequestResponse, status: number, challenge?: string): Record<string, unknown> {
  expect(answer.statusCode).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(answer.headers['www-authenticate']).toBe(challenge);
  const problem = answer.json<Record<string, unknown>>();
  expect(problem).toMatchObject({ status, title: expect.any(String), detail: expect.any(String), type: expect.stringMatching(/^urn:tessera:problem:/) });
  return problem;
}
/** Refused requests change nothing: the head of the log stays where it was. */
async function expectNothingAppended(send: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  const before = await tessera.store.headPosition();
  const answer = await send();
  expect(await tessera.store.headPosition()).toBe(before);
  return answer;
}

describe('admin token auth on /admin/v1/*', () => {
  const url = '/admin/v1/families/some-family/revoke';

  it('401 with WWW-Authenticate: Bearer and no error code when no token is presented', async () => {
    expectProblem(await expectNothingAppended(() => post(url)), 401, 'Bearer');
    expectProblem(await post(url, undefined, { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 401, 'Bearer');
  });

  it('401 with error="invalid_token" for an unknown token, for a revoked one, and for a v5 access token', async () => {
    expectProblem(await expectNothingAppended(() => post(url, 'tsa_unknown')), 401, 'Bearer error="invalid_token"');
    expectProblem(await expectNothingAppended(() => post(url, admin.revoked.token)), 401, 'Bearer error="invalid_token"');
    expectProblem(await post(url, (await getPair()).token), 401, 'Bearer error="invalid_token"');
  });

  it('403 with error="insufficient_scope" naming tokens:revoke for a token with audit:read only', async () => {
    const problem = expectProblem(await expectNothingAppended(() => post(url, admin.reader.token)), 403, 'Bearer error="insufficient_scope", scope="tokens:revoke"');
    expect(problem.type).toBe('urn:tessera:problem:forbidden');
  });

  // A caller without a usable token learns nothing of the admin API, not even which paths and
  // methods exist: every request under /admin/v1/ is the same 401 to it. With one, 404 and 405.
  it('an unknown path, or a known one with a method it does not take, under /admin/v1/ is 401 without a usable token, 404 or 405 with one', async () => {
    const send = (method: 'GET' | 'DELETE', url: string, adminToken?: string) =>
      adminApp.inject({ method, url, headers: adminToken === undefined ? {} : { authorization: `Bearer ${adminToken}` } });
    for (const [method, path] of [['GET', '/admin/v1/nothing-here'], ['DELETE', '/admin/v1/families/some-family/revoke']] as const) {
      expectProblem(await send(method, path), 401, 'Bearer');
      expectProblem(await send(method, path, admin.revoked.token), 401, 'Bearer error="invalid_token"');
    }
    expect((await send('GET', '/admin/v1/nothing-here', admin.reader.token)).statusCode).toBe(404);
    expect((await send('DELETE', '/admin/v1/families/some-family/revoke', admin.reader.token)).statusCode).toBe(405);
    // Outside /admin/v1/ nothing changes: an unknown path is a 404 for anyone.
    expect((await send('GET', '/admin/nothing-here')).statusCode).toBe(404);
  });
});

describe('POST /admin/v1/families/{family_id}/revoke', () => {
  it('revokes the family: the answering app refuses its access token at once, and its refresh token; the event names the admin token, the request and the address', async () => {
    const pair = await getPair();
    expect((await charge(pair.token)).statusCode).toBe(200);
    const familyId = familyOf(pair.token);
    // An operator's `curl -X POST -d ''` sends a form content type and an empty body: accepted.
    const answer = await post(`/admin/v1/families/${familyId}/revoke`, admin.revoker.token, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.json()).toEqual({ family_id: familyId, account_id: 'acct-a', revoked: true, already_revoked: false });
    // No wait: the verifier in this process was told before the answer was sent.
    expectProblem(await charge(pair.token), 401, 'Bearer error="invalid_token"');
    expect((await refresh(pair.refresh_token)).statusCode).toBe(401);
    const [revoked] = (await tessera.store.readStream(streams.family(familyId))).slice(-1);
    expect(revoked?.event).toMatchObject({ type: 'TokenRevoked', familyId, accountId: 'acct-a', generation: 0 });
    expect(revoked?.event).not.toHaveProperty('reason');
    expect(revoked?.metadata).toEqual({ actor: `admin:${admin.revoker.id}`, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/), sourceAddress: '127.0.0.1', accountId: 'acct-a' });
  });

  it('a family already revoked answers 200 with already_revoked and appends nothing', async () => {
    const pair = await getPair();
    const familyId = familyOf(pair.token);
    expect((await app.inject({ method: 'POST', url: '/v5/Authorization/revoke-oauth-token', payload: { refresh_token: pair.refresh_token } })).statusCode).toBe(200);
    const answer = await expectNothingAppended(() => post(`/admin/v1/families/${familyId}/revoke`, admin.revoker.token));
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ family_id: familyId, already_revoked: true });
  });

  it('an unknown family is 404 problem+json, appending nothing', async () => {
    const problem = expectProblem(await expectNothingAppended(() => post('/admin/v1/families/no-such-family/revoke', admin.revoker.token)), 404, undefined);
    expect(problem).toMatchObject({ type: 'urn:tessera:problem:not-found', detail: 'no token family no-such-family' });
  });
});

describe('POST /admin/v1/accounts/{account_id}/revoke-tokens', () => {
  it('revokes every live family of the account and every token issued up to now, v1 included, in the answering app at once; other accounts keep theirs', async () => {
    const pairOfC = () => getPair('tsl_c', 'tsk_c');
    const first = await pairOfC();
    const second = await pairOfC();
    const refreshed = (await refresh(second.refresh_token)).json<{ token: string; refresh_token: string }>();
    const alreadyRevoked = await pairOfC();
    await app.inject({ method: 'POST', url: '/v5/Authorization/revoke-oauth-token', payload: { refresh_token: alreadyRevoked.refresh_token } });
    const v1 = await legacyToken();
    const otherAccount = await getPair('tsl_b', 'tsk_b');
    expect((await legacyAccount(v1)).statusCode).toBe(200);

    // The families read model starts on the first account revocation, on a thread at the lowest
    // CPU priority. On a busy machine its catch-up can outlast the 2 s that revocation waits, and
    // the answer is then 503 with Retry-After: a client tries again, and so does this test.
    const { answer } = await until(() => post('/admin/v1/accounts/acct-c/revoke-tokens', admin.revoker.token), 'the account revocation to be answered', {
      done: (reply) => reply.statusCode !== 503 || reply.headers['retry-after'] === undefined,
      timeoutMs: 30_000,
      everyMs: 200,
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    // The first family and the refreshed one: the family its client revoked is not counted.
    expect(answer.json()).toEqual({ revoked_families: 2 });

    // No wait: the cut and the revocations reached the verifier in this process before the answer.
    for (const token of [first.token, refreshed.token]) expectProblem(await charge(token), 401, 'Bearer error="invalid_token"');
    expectProblem(await legacyAccount(v1), 401, 'Bearer error="invalid_token"');
    for (const token of [first.refresh_token, refreshed.refresh_token]) expect((await refresh(token)).statusCode).toBe(401);
    expect((await charge(otherAccount.token)).statusCode).toBe(200);
    // The account itself is not closed: a client that authenticates again gets a token that works, in this same second.
    expect((await charge((await pairOfC()).token)).statusCode).toBe(200);
    expect((await legacyAccount(await legacyToken())).statusCode).toBe(200);

    const cut = (await tessera.store.readStream(streams.account('acct-c'))).at(-1);
    expect(cut?.event).toMatchObject({ type: 'AccountTokensRevoked', accountId: 'acct-c', reason: 'operator', rejectsUntil: expect.any(Number) });
    expect(cut?.metadata).toMatchObject({ actor: `admin:${admin.revoker.id}`, sourceAddress: '127.0.0.1', accountId: 'acct-c' });
    const revocations = (await tessera.store.readAll({ types: ['TokenRevoked'], after: cut?.position })).filter((r) => r.event.type === 'TokenRevoked' && r.event.accountId === 'acct-c');
    expect(revocations.map((r) => (r.event.type === 'TokenRevoked' ? r.event.familyId : '')).sort()).toEqual([familyOf(first.token), familyOf(refreshed.token)].sort());
    expect(revocations.every((r) => r.metadata.actor === `admin:${admin.revoker.id}` && r.metadata.requestId === cut?.metadata.requestId)).toBe(true);
  });

  it('a second call finds no live family left: it answers 0, and the tokens stay refused', async () => {
    const pair = await getPair('tsl_b', 'tsk_b');
    expect((await post('/admin/v1/accounts/acct-b/revoke-tokens', admin.revoker.token)).json()).toEqual({ revoked_families: expect.any(Number) });
    expect((await post('/admin/v1/accounts/acct-b/revoke-tokens', admin.revoker.token)).json()).toEqual({ revoked_families: 0 });
    expect((await charge(pair.token)).statusCode).toBe(401);
  });

  it('an unknown account is 404 problem+json, appending nothing; a token without tokens:revoke is 403', async () => {
    const problem = expectProblem(await expectNothingAppended(() => post('/admin/v1/accounts/no-such-account/revoke-tokens', admin.revoker.token)), 404, undefined);
    expect(problem.detail).toBe('no account no-such-account');
    expectProblem(await expectNothingAppended(() => post('/admin/v1/accounts/acct-a/revoke-tokens', admin.reader.token)), 403, 'Bearer error="insufficient_scope", scope="tokens:revoke"');
  });
});

describe('GET /admin/v1/events with a forged cursor', () => {
  // Made as the server makes its cursors (base64url of `p1:<position>`), with positions past what the audit index holds.
  const forged = (position: string) => Buffer.from(`p1:${position}`).toString('base64url');

  const events = (cursor: string) => adminApp.inject({ method: 'GET', url: `/admin/v1/events?cursor=${cursor}`, headers: { authorization: `Bearer ${admin.reader.token}` } });

  it.each(['9999999999999999999', '9223372036854775808'])('a position past a signed 64-bit integer (%s) is 400 problem+json naming the cursor, not a 500', async (position) => {
    // The audit index follows the log on its own (it is not held): once it has caught up it answers.
    await expect.poll(async () => (await events(forged('0'))).statusCode).toBe(200);
    const answer = await events(forged(position));
    const problem = expectProblem(answer, 400, undefined);
    expect(problem.errors).toEqual([{ field: 'cursor', message: expect.any(String) }]);
  });

  it('the largest position the index can hold is a cursor like any other: no rows after it', async () => {
    await expect.poll(async () => (await events(forged('0'))).statusCode).toBe(200);
    const answer = await events(forged('9223372036854775807'));
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ events: [], next_cursor: null });
  });
});
