import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { streams, type AccountEvent } from '@tessera/events';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { epochSeconds, systemClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * A JSON body with a member that names an object's prototype (`__proto__`, or `constructor`
 * holding `prototype`, at any depth) stays refused, as fastify's poisoning protection refuses it,
 * but as what it is: a 400 problem+json naming the field, not "not valid JSON". Nothing is
 * appended. On both listeners of the all-in-one as `tessera start` wires it.
 */
let tessera: InProcessAllInOne;
let accessToken: string;
let adminToken: string;

beforeAll(async () => {
  tessera = await startInProcess();
  const at = epochSeconds(systemClock);
  const events: AccountEvent[] = [
    { type: 'AccountRegistered', v: 1, accountId: 'acct-charge', name: 'Shop', permissions: ['transaction:charge'], at },
    { type: 'ApiCredentialIssued', v: 1, accountId: 'acct-charge', credentialId: 'acct-charge-v5', apiLoginId: 'tsl_charge', transactionKeyHash: tessera.hasher.hash('tsk_charge'), at },
  ];
  await tessera.store.append(streams.account('acct-charge'), events.map((event) => ({ event })), { expectedRevision: 'no_stream' });
  const adminTokens = createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'test' });
  adminToken = (await adminTokens.create({ name: 'signals', scopes: ['ssf:receivers'] })).adminToken;
  await tessera.caughtUp();
  const pair = await tessera.app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: 'tsl_charge', transaction_key: 'tsk_charge' } });
  expect(pair.statusCode).toBe(200);
  accessToken = pair.json<{ token: string }>().token;
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

/** Each JSON route with what makes its body otherwise acceptable, and the credentials it needs to reach its body. */
const routes: [listener: string, url: string, fields: Record<string, unknown>, app: () => FastifyInstance, authorization: () => string | undefined][] = [
  ['public', '/v5/Transaction/charge', { amount: 1 }, () => tessera.app, () => `Bearer ${accessToken}`],
  ['public', '/v5/Authorization/get-oauth-token', { api_login_id: 'tsl_charge', transaction_key: 'tsk_charge' }, () => tessera.app, () => undefined],
  ['admin', '/admin/v1/ssf/receivers', { name: 'a receiver' }, () => tessera.admin, () => `Bearer ${adminToken}`],
];

/** Beside the route's own fields: the JSON text (written by hand, as JSON.stringify would drop a __proto__ key), and the field named. */
const poisoned: [what: string, members: string, field: string, member: string][] = [
  ['a __proto__ member', '"__proto__": {"x": 1}', '__proto__', '__proto__'],
  ['a __proto__ member spelled with an escape', '"\\u005f_proto__": {"x": 1}', '__proto__', '__proto__'],
  ['a __proto__ member nested in objects and arrays', '"a": {"b": [1, {"__proto__": {"x": 1}}]}', 'a.b.1.__proto__', '__proto__'],
  ['a constructor member holding prototype', '"constructor": {"prototype": {"x": 1}}', 'constructor.prototype', 'constructor.prototype'],
  ['a constructor member holding prototype, nested', '"a": [{"constructor": {"prototype": {"x": 1}}}]', 'a.0.constructor.prototype', 'constructor.prototype'],
];

describe.each(routes)('on the %s listener, POST %s', (_listener, url, fields, app, authorization) => {
  const post = (payload: string) => {
    const bearer = authorization();
    return app().inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json', ...(bearer ? { authorization: bearer } : {}) } });
  };

  it.each(poisoned)('%s is a 400 problem+json naming the field, and appends nothing', async (_what, members, field, member) => {
    const before = await tessera.store.headPosition();
    const answer = await post(`{${JSON.stringify(fields).slice(1, -1)}, ${members}}`);
    expect(answer.statusCode).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.json()).toEqual({
      type: 'urn:tessera:problem:bad-request',
      title: 'Bad Request',
      status: 400,
      detail: `the field ${member} is not allowed`,
      errors: [{ field, message: expect.stringContaining('not allowed') }],
    });
    expect(await tessera.store.headPosition()).toBe(before);
  });

  it('still answers a body that is not valid JSON as such, even with a __proto__ member in it', async () => {
    const answer = await post('{"__proto__": {"x": 1},');
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toMatchObject({ detail: 'the request body is not valid JSON' });
  });
});

describe('a body nested as deep as 16 KiB allows', () => {
  it('is read without a stack overflow, and the member at its bottom named', async () => {
    const depth = 8000;
    const payload = `${'['.repeat(depth)}{"__proto__": 1}${']'.repeat(depth)}`;
    const answer = await tessera.app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload, headers: { 'content-type': 'application/json' } });
    expect(answer.statusCode).toBe(400);
    expect(answer.json<{ errors: { field: string }[] }>().errors).toEqual([{ field: `${'0.'.repeat(depth)}__proto__`, message: expect.any(String) }]);
  });
});

describe('what is not a prototype member is taken', () => {
  it.each([
    ['a constructor member that is not an object', '{"constructor": 1}'],
    ['a constructor member that is an object without prototype', '{"constructor": {"x": 1}}'],
    ['a prototype member outside constructor', '{"a": {"prototype": {"x": 1}}}'],
    ['proto without the underscores', '{"proto": 1}'],
  ])('the charge route takes %s', async (_what, payload) => {
    const answer = await tessera.app.inject({ method: 'POST', url: '/v5/Transaction/charge', payload, headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` } });
    expect(answer.statusCode).toBe(200);
  });
});
