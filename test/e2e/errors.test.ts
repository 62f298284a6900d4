import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { startTessera, type Credentials, type HttpAnswer, type TesseraProcess } from '../support/tessera-process.js';

/** Spec section 7 and the house rule: bad input gets a clear 4xx problem+json and changes nothing. */
let tessera: TesseraProcess;
let account: Credentials;
let log: SqliteEventStore;
beforeAll(async () => {
  tessera = await startTessera();
  account = await tessera.createAccount();
  log = new SqliteEventStore({ file: join(tessera.dataDir, 'events.db') });
});
afterAll(async () => {
  await log?.close();
  await tessera?.stop();
});

const v5 = ['/v5/Authorization/get-oauth-token', '/v5/Authorization/refresh-oauth-token', '/v5/Authorization/revoke-oauth-token'];
const raw = (path: string, body: string | Buffer, contentType?: string) =>
  tessera.request(path, { method: 'POST', headers: contentType ? { 'content-type': contentType } : {}, body });

async function expectRefusedWithoutAppending(status: number, send: () => Promise<HttpAnswer>): Promise<Record<string, unknown>> {
  const before = await log.headPosition();
  const answer = await send();
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = answer.json();
  expect(problem).toMatchObject({ status, type: expect.any(String), title: expect.any(String), detail: expect.any(String) });
  expect(answer.text).not.toMatch(/at .+\.ts:\d+/);
  expect(await log.headPosition()).toBe(before);
  return problem;
}

describe('400 — a required field is missing or invalid', () => {
  it.each([
    ['missing transaction_key', { api_login_id: 'x' }],
    ['missing api_login_id', { transaction_key: 'x' }],
    ['empty api_login_id', { api_login_id: '', transaction_key: 'x' }],
    ['empty transaction_key', { api_login_id: 'x', transaction_key: '' }],
    ['wrong field name', { apiLoginId: 'x', transaction_key: 'x' }],
    ['unknown extra field', { api_login_id: 'x', transaction_key: 'x', scope: 'admin' }],
    ['a number for a string', { api_login_id: 1, transaction_key: 'x' }],
  ])('get-oauth-token: %s', async (_name, body) => {
    const problem = await expectRefusedWithoutAppending(400, () => tessera.postJson(v5[0]!, body));
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: expect.any(String), message: expect.any(String) })]));
  });

  it.each([v5[1]!, v5[2]!])('%s: missing, empty or misnamed refresh_token', async (path) => {
    await expectRefusedWithoutAppending(400, () => tessera.postJson(path, {}));
    await expectRefusedWithoutAppending(400, () => tessera.postJson(path, { refresh_token: '' }));
    await expectRefusedWithoutAppending(400, () => tessera.postJson(path, { refreshToken: 'x' }));
  });

  it.each(v5)('%s: malformed JSON, and a body that is not a JSON object', async (path) => {
    await expectRefusedWithoutAppending(400, () => raw(path, '{"refresh_token":', 'application/json'));
    for (const body of ['[]', '"x"', 'null', '42']) await expectRefusedWithoutAppending(400, () => raw(path, body, 'application/json'));
  });

  it('an empty JSON body', async () => {
    await expectRefusedWithoutAppending(400, () => raw(v5[0]!, '', 'application/json'));
  });
});

describe('415 and 413', () => {
  it.each(v5)('%s: a content type other than JSON is 415', async (path) => {
    await expectRefusedWithoutAppending(415, () => raw(path, 'refresh_token=x', 'application/x-www-form-urlencoded'));
    await expectRefusedWithoutAppending(415, () => raw(path, 'x', 'text/plain'));
  });

  it('JSON with a charset parameter is fine', async () => {
    const answer = await raw(
      v5[0]!,
      JSON.stringify({ api_login_id: account.api_login_id, transaction_key: account.transaction_key }),
      'application/json; charset=utf-8',
    );
    expect(answer.status).toBe(200);
  });

  it('a body over 16 KiB is 413', async () => {
    const body = JSON.stringify({ api_login_id: 'x', transaction_key: 'k'.repeat(17 * 1024) });
    await expectRefusedWithoutAppending(413, () => raw(v5[0]!, body, 'application/json'));
  });
});

describe('401 — invalid credentials or token', () => {
  it('a wrong Transaction Key, an unknown API Login ID', async () => {
    await expectRefusedWithoutAppending(401, () => tessera.postJson(v5[0]!, { api_login_id: account.api_login_id, transaction_key: 'wrong' }));
    await expectRefusedWithoutAppending(401, () => tessera.postJson(v5[0]!, { api_login_id: 'nobody', transaction_key: account.transaction_key }));
  });

  it.each([v5[1]!, v5[2]!])('%s: a refresh token that was never issued (no Bearer challenge: the token is in the body)', async (path) => {
    const answer = await tessera.postJson(path, { refresh_token: 'tsr_AAAAAAAAAAAAAAAAAAAAAA.' + 'B'.repeat(43) });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBeUndefined();
    await expectRefusedWithoutAppending(401, () => tessera.postJson(path, { refresh_token: 'garbage' }));
  });
});

describe('401 — forged access tokens on protected routes', () => {
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  it('an unknown kid, alg none, HS256 and a tampered payload are each 401, and change nothing', async () => {
    const pair = (await tessera.postJson(v5[0]!, { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as { token: string };
    const [header, payload, signature] = pair.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = {
      // The verifier looks at the signing-key stream once before refusing a kid it does not know.
      'unknown kid': `${b64({ alg: 'ES256', typ: 'at+jwt', kid: 'no-such-key' })}.${payload}.${signature}`,
      'alg none': `${b64({ alg: 'none', typ: 'at+jwt' })}.${payload}.`,
      HS256: `${b64({ alg: 'HS256', typ: 'at+jwt', kid: JSON.parse(Buffer.from(header, 'base64url').toString()).kid })}.${payload}.${signature}`,
      'tampered payload': `${header}.${b64({ ...claims, scope: 'transaction:charge admin' })}.${signature}`,
    };
    const charge = (token: string) => tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });
    expect((await charge(pair.token)).status).toBe(200);
    for (const [what, token] of Object.entries(forged)) {
      const problem = await expectRefusedWithoutAppending(401, () => charge(token));
      expect(problem.type, what).toBe('urn:tessera:problem:invalid-token');
      const forwardAuth = await tessera.request('/forward-auth?permission=transaction:charge', { headers: { authorization: `Bearer ${token}` } });
      expect(forwardAuth.status, what).toBe(401);
    }
  });
});

describe('never a 5xx', () => {
  it('answers odd methods, paths and headers with 4xx', async () => {
    const answers = await Promise.all([
      tessera.request('/v5/Authorization/get-oauth-token', { method: 'GET' }),
      tessera.request('/v5/Authorization/nope', { method: 'POST' }),
      tessera.request('/v5/Authorization/get-oauth-token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '\u0000\u0001' }),
      tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { authorization: 'Bearer ' + 'x'.repeat(5000) } }),
      tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { authorization: 'Bearer a.b.c' } }),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });
});

describe('what fastify refuses before routing', () => {
  it.each([
    ['public', 'a path that is not valid percent-encoding', '/v5/Authorization/%E0%A4%A', 400],
    ['admin', 'a path that is not valid percent-encoding', '/admin/v1/accounts/%E0%A4%A/access-at', 400],
    ['admin', 'a path parameter past its length limit', `/admin/v1/accounts/${'a'.repeat(101)}/access-at`, 414],
  ] as const)('on the %s listener, %s is answered problem+json with HSTS and nosniff, and logged with an access line', async (listener, _what, path, status) => {
    const answer = listener === 'public' ? await tessera.request(path) : await tessera.adminRequest(path);
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(answer.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    const accessLine = () =>
      tessera
        .logs()
        .split('\n')
        .find((line) => line.includes('"request completed"') && line.includes(`"url":"${path}"`));
    await expect.poll(accessLine, { timeout: 5_000 }).toBeDefined();
    expect(JSON.parse(accessLine()!)).toMatchObject({ req: { method: 'GET', url: path, remoteAddress: '127.0.0.1' }, res: { statusCode: status } });
  });
});
