import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { streams, type AccountEvent } from '@tessera/events';
import { epochSeconds, systemClock } from '@tessera/timing';
import type { SecretHasher } from '@tessera/tokens';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * The v5 and v1 routes as HTTP, through fastify's inject() into the all-in-one as `tessera start`
 * wires it (composeAllInOne on a host with an in-memory store): the plain HTTP behaviour (status,
 * problem+json, headers, body shapes) without a spawned HTTPS process.
 */
const v5 = {
  get: '/v5/Authorization/get-oauth-token',
  refresh: '/v5/Authorization/refresh-oauth-token',
  revoke: '/v5/Authorization/revoke-oauth-token',
};

let tessera: InProcessAllInOne;
let app: FastifyInstance;
let hasher: SecretHasher;

/** Appends an account the way the account service does, with known secrets. */
async function register(accountId: string, permissions: string[], credentials: { apiLoginId: string; transactionKey: string; apiId?: string; apiKey?: string }) {
  const at = epochSeconds(systemClock);
  const events: AccountEvent[] = [
    { type: 'AccountRegistered', v: 1, accountId, name: `Shop ${accountId}`, permissions, at },
    { type: 'ApiCredentialIssued', v: 1, accountId, credentialId: `${accountId}-v5`, apiLoginId: credentials.apiLoginId, transactionKeyHash: hasher.hash(credentials.transactionKey), at },
  ];
  if (credentials.apiId && credentials.apiKey) {
    events.push({ type: 'LegacyCredentialIssued', v: 1, accountId, credentialId: `${accountId}-v1`, apiId: credentials.apiId, apiKeyHash: hasher.hash(credentials.apiKey), at });
  }
  await tessera.store.append(streams.account(accountId), events.map((event) => ({ event })), { expectedRevision: 'no_stream' });
}

beforeAll(async () => {
  tessera = await startInProcess({ env: { TESSERA_ISSUER: 'urn:tessera:test', TESSERA_REFRESH_TOKEN_TTL: '86400' } });
  ({ app, hasher } = tessera);
  await register('acct-charge', ['transaction:charge'], { apiLoginId: 'tsl_charge', transactionKey: 'tsk_charge', apiId: 'tla_charge', apiKey: 'tlk_charge' });
  await register('acct-read', ['reports:read'], { apiLoginId: 'tsl_read', transactionKey: 'tsk_read' });
  await register('acct-none', [], { apiLoginId: 'tsl_none', transactionKey: 'tsk_none' });
  // The log delivers to the read models after the appends returned, as it does in the server.
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

const postJson = (url: string, body: unknown) => app.inject({ method: 'POST', url, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const postRaw = (url: string, payload: string, contentType?: string) => app.inject({ method: 'POST', url, payload, headers: contentType ? { 'content-type': contentType } : {} });
const charge = (token: string, payload = '{}', contentType = 'application/json') =>
  app.inject({ method: 'POST', url: '/v5/Transaction/charge', payload, headers: { authorization: `Bearer ${token}`, 'content-type': contentType } });
const getToken = async (apiLoginId = 'tsl_charge', transactionKey = 'tsk_charge') => {
  const answer = await postJson(v5.get, { api_login_id: apiLoginId, transaction_key: transactionKey });
  expect(answer.statusCode).toBe(200);
  return answer.json<{ timestamp: string; token: string; refresh_token: string; expires: string }>();
};

/** A 4xx as docs/interface.md (Errors) says: problem+json, no-store; returns the problem document. */
function expectProblem(answer: LightMyRequestResponse, status: number, type?: string): Record<string, unknown> {
  expect(answer.statusCode).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers['cache-control']).toBe('no-store');
  const problem = answer.json<Record<string, unknown>>();
  expect(problem).toMatchObject({ status, title: expect.any(String), detail: expect.any(String), type: type ?? expect.stringMatching(/^urn:tessera:problem:/) });
  return problem;
}
/** Refused requests change nothing: the head of the log stays where it was. */
async function expectNothingAppended(send: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  const before = await tessera.store.headPosition();
  const answer = await send();
  expect(await tessera.store.headPosition()).toBe(before);
  return answer;
}

describe('v5 token responses', () => {
  it('get-oauth-token answers 200, Cache-Control: no-store, exactly timestamp, token, refresh_token and expires, 60 minutes apart', async () => {
    const answer = await postJson(v5.get, { api_login_id: 'tsl_charge', transaction_key: 'tsk_charge' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    const pair = answer.json<Record<string, string>>();
    expect(Object.keys(pair).sort()).toEqual(['expires', 'refresh_token', 'timestamp', 'token']);
    expect(new Date(pair.timestamp!).toISOString()).toBe(pair.timestamp);
    expect(Date.parse(pair.expires!) - Date.parse(pair.timestamp!)).toBe(3600_000);
    expect((await charge(pair.token!)).statusCode).toBe(200);
  });

  it('refresh-oauth-token answers a new pair with no-store; the prior access token and refresh token are then refused with 401', async () => {
    const pair = await getToken();
    const answer = await postJson(v5.refresh, { refresh_token: pair.refresh_token });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    const next = answer.json<{ token: string; refresh_token: string }>();
    expect(next.refresh_token).not.toBe(pair.refresh_token);
    expect((await charge(next.token)).statusCode).toBe(200);
    expectProblem(await charge(pair.token), 401, 'urn:tessera:problem:invalid-token');
    const reused = await expectNothingAppended(() => postJson(v5.refresh, { refresh_token: pair.refresh_token }));
    expectProblem(reused, 401, 'urn:tessera:problem:invalid-token');
    // Refresh is authenticated by the token in the body, not a bearer header: no Bearer challenge.
    expect(reused.headers['www-authenticate']).toBeUndefined();
  });

  it('revoke-oauth-token answers {revoked: true, timestamp} with no-store; the access token is then refused, and so is a second revoke', async () => {
    const pair = await getToken();
    const answer = await postJson(v5.revoke, { refresh_token: pair.refresh_token });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.json()).toEqual({ revoked: true, timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expectProblem(await charge(pair.token), 401);
    expectProblem(await postJson(v5.revoke, { refresh_token: pair.refresh_token }), 401, 'urn:tessera:problem:invalid-token');
  });

  it('of 16 concurrent refreshes of one token, one answers 200 and 15 answer 401', async () => {
    const pair = await getToken();
    const answers = await Promise.all(Array.from({ length: 16 }, () => postJson(v5.refresh, { refresh_token: pair.refresh_token })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, ...Array<number>(15).fill(401)]);
  });
});

describe('v5 refusals', () => {
  it.each([
    ['missing transaction_key', { api_login_id: 'x' }],
    ['empty api_login_id', { api_login_id: '', transaction_key: 'x' }],
    ['an unknown extra field', { api_login_id: 'x', transaction_key: 'x', scope: 'admin' }],
    ['a number for a string', { api_login_id: 1, transaction_key: 'x' }],
  ])('400 problem+json naming the field for %s, appending nothing', async (_what, body) => {
    const problem = expectProblem(await expectNothingAppended(() => postJson(v5.get, body)), 400, 'urn:tessera:problem:bad-request');
    expect(problem.errors).toEqual(expect.arrayContaining([{ field: expect.any(String), message: expect.any(String) }]));
  });

  it.each([v5.get, v5.refresh, v5.revoke])('%s: malformed JSON, a body that is not an object, and an empty body are 400', async (url) => {
    for (const body of ['{"refresh_token":', '[]', 'null', '']) {
      expectProblem(await expectNothingAppended(() => postRaw(url, body, 'application/json')), 400, 'urn:tessera:problem:bad-request');
    }
  });

  it.each([v5.get, v5.refresh, v5.revoke])('%s: a form or text body is 415', async (url) => {
    expectProblem(await postRaw(url, 'refresh_token=x', 'application/x-www-form-urlencoded'), 415, 'urn:tessera:problem:unsupported-media-type');
    expectProblem(await postRaw(url, 'x', 'text/plain'), 415, 'urn:tessera:problem:unsupported-media-type');
  });

  it('a query-parameter error names the query parameter, not the body', async () => {
    const problem = expectProblem(await app.inject({ method: 'GET', url: '/forward-auth?permission=transaction:charge&interface=v9' }), 400, 'urn:tessera:problem:bad-request');
    expect(problem.detail).toMatch(/query/);
    expect(problem.detail).not.toMatch(/body/);
    expect(problem.errors).toEqual([{ field: 'interface', message: expect.any(String) }]);
  });

  it('a body over 16 KiB is 413', async () => {
    expectProblem(await postJson(v5.get, { api_login_id: 'x', transaction_key: 'k'.repeat(17 * 1024) }), 413, 'urn:tessera:problem:payload-too-large');
  });

  it('wrong credentials are 401 invalid-credentials with no Bearer challenge (the endpoint is not bearer-protected), appending nothing', async () => {
    for (const [login, key] of [['tsl_charge', 'tsk_wrong'], ['tsl_nobody', 'tsk_charge']]) {
      const answer = await expectNothingAppended(() => postJson(v5.get, { api_login_id: login, transaction_key: key }));
      expectProblem(answer, 401, 'urn:tessera:problem:invalid-credentials');
      expect(answer.headers['www-authenticate']).toBeUndefined();
    }
  });

  it('refresh and revoke refusals carry no Bearer challenge: they are authenticated by the refresh token in the body', async () => {
    for (const url of [v5.refresh, v5.revoke]) {
      const answer = await postJson(url, { refresh_token: `tsr_${'A'.repeat(22)}.${'B'.repeat(43)}` });
      expectProblem(answer, 401, 'urn:tessera:problem:invalid-token');
      expect(answer.headers['www-authenticate']).toBeUndefined();
    }
  });

  it('refresh and revoke refusals all carry one detail, so an answer does not tell a revoked family from an active or unknown one', async () => {
    const revoked = await getToken();
    expect((await postJson(v5.revoke, { refresh_token: revoked.refresh_token })).statusCode).toBe(200);
    const active = await getToken();
    const guessed = (refreshToken: string) => `${refreshToken.split('.')[0]!}.${'B'.repeat(43)}`;
    const details = new Set<unknown>();
    for (const url of [v5.refresh, v5.revoke]) {
      for (const refreshToken of [revoked.refresh_token, guessed(revoked.refresh_token), guessed(active.refresh_token), `tsr_${'A'.repeat(22)}.${'B'.repeat(43)}`, 'garbage']) {
        details.add(expectProblem(await postJson(url, { refresh_token: refreshToken }), 401, 'urn:tessera:problem:invalid-token').detail);
      }
    }
    expect([...details]).toEqual([expect.stringContaining('get-oauth-token')]);
  });

  it('a refresh token that is not ours is 401 invalid-token', async () => {
    expectProblem(await postJson(v5.refresh, { refresh_token: 'garbage' }), 401, 'urn:tessera:problem:invalid-token');
  });
});

describe('protected routes', () => {
  it('RFC 6750 challenges: bare Bearer (and the DPoP challenge of RFC 9449) without credentials, invalid_token for a bad token, insufficient_scope with the scope for a 403', async () => {
    const missing = await app.inject({ method: 'POST', url: '/v5/Transaction/charge' });
    expectProblem(missing, 401);
    expect(missing.headers['www-authenticate']).toBe('Bearer, DPoP algs="ES256 RS256 PS256 EdDSA"');
    const forged = await charge('a.b.c');
    expectProblem(forged, 401, 'urn:tessera:problem:invalid-token');
    expect(forged.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    const readOnly = await getToken('tsl_read', 'tsk_read');
    const forbidden = await charge(readOnly.token);
    expectProblem(forbidden, 403, 'urn:tessera:problem:forbidden');
    expect(forbidden.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="transaction:charge"');
  });

  it('the charge route takes a JSON object as its body: anything else is 400 or 415, checked after the token', async () => {
    const { token } = await getToken();
    expect((await charge(token, '{"amount":"1.00"}')).statusCode).toBe(200);
    for (const body of ['', '[]', 'null', '"x"', '42', '{"amount":']) {
      expectProblem(await charge(token, body), 400, 'urn:tessera:problem:bad-request');
    }
    const noBody = await app.inject({ method: 'POST', url: '/v5/Transaction/charge', headers: { authorization: `Bearer ${token}` } });
    expectProblem(noBody, 400, 'urn:tessera:problem:bad-request');
    expectProblem(await charge(token, 'amount=1', 'application/x-www-form-urlencoded'), 415, 'urn:tessera:problem:unsupported-media-type');
    expectProblem(await charge(token, 'x', 'text/plain'), 415, 'urn:tessera:problem:unsupported-media-type');
    expectProblem(await charge('not-a-token', '[]'), 401, 'urn:tessera:problem:invalid-token');
  });

  it('an unknown route is 404 problem+json', async () => {
    expectProblem(await app.inject({ method: 'GET', url: '/v5/nowhere' }), 404, 'urn:tessera:problem:not-found');
    expect((await app.inject({ method: 'POST', url: '/v5/nowhere' })).statusCode).toBe(404);
    // Whatever the body: a route that does not exist is not there to take it.
    expectProblem(await app.inject({ method: 'POST', url: '/v5/nowhere', payload: 'x', headers: { 'content-type': 'text/plain' } }), 404);
  });

  it.each([
    ['GET', v5.get, 'POST'],
    ['PUT', v5.refresh, 'POST'],
    ['DELETE', `${v5.revoke}/`, 'POST'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['DELETE', '/.well-known/jwks.json?x=1', 'GET, HEAD'],
    ['GET', '/v5/Transaction/charge', 'POST'],
    ['TRACE', '/forward-auth', 'DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT'],
    ['QUERY', '/healthz', 'GET, HEAD'],
  ])('%s %s, a known path with a method it does not take, is 405 problem+json with Allow: %s', async (method, url, allow) => {
    const answer = await expectNothingAppended(() => app.inject({ method: method as 'GET', url }));
    expectProblem(answer, 405, 'urn:tessera:problem:method-not-allowed');
    expect(answer.headers.allow).toBe(allow);
  });

  it('the JWKS names the key tokens are signed with, cacheable for a minute', async () => {
    const pair = await getToken();
    const kid = (JSON.parse(Buffer.from(pair.token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
    const answer = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(answer.headers['cache-control']).toBe('public, max-age=60');
    expect(answer.json<{ keys: { kid: string; d?: string }[] }>().keys).toEqual([expect.objectContaining({ kid, alg: 'ES256', use: 'sig' })]);
    expect(answer.body).not.toContain('"d"');
  });
});

describe('forward-auth fails closed', () => {
  const forwardAuth = (query: string, token?: string, method: 'GET' | 'HEAD' | 'POST' = 'GET') =>
    app.inject({ method, url: `/forward-auth${query}`, headers: token ? { authorization: `Bearer ${token}` } : {} });

  it.each(['', '?permission=', '?interface=v5', '?authenticated=false', '?permission=&authenticated=false', '?permision=transaction:charge'])(
    '%s (no permission, no authenticated=true) is 400 naming permission, even for a valid token with no permissions',
    async (query) => {
      const { token } = await getToken('tsl_none', 'tsk_none');
      for (const method of ['GET', 'HEAD', 'POST'] as const) {
        const answer = await forwardAuth(query, token, method);
        expect(answer.statusCode).toBe(400);
        if (method !== 'HEAD') expect(expectProblem(answer, 400, 'urn:tessera:problem:bad-request').errors).toEqual([{ field: 'permission', message: expect.stringContaining('authenticated=true') }]);
      }
      expect((await forwardAuth(query)).statusCode).toBe(400);
    },
  );

  it('authenticated=true asks for authentication only: any valid token of the interface is 200, no token is 401', async () => {
    const { token } = await getToken('tsl_none', 'tsk_none');
    const answer = await forwardAuth('?authenticated=true', token);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['x-tessera-subject']).toBe('acct-none');
    expect(answer.headers['x-tessera-scope']).toBe('');
    const missing = await forwardAuth('?authenticated=true');
    expectProblem(missing, 401);
    expect(missing.headers['www-authenticate']).toBe('Bearer, DPoP algs="ES256 RS256 PS256 EdDSA"');
    expect((await forwardAuth('?authenticated=true&interface=v1', token)).statusCode).toBe(401);
  });

  it('a permission is checked whenever it is named, authenticated=true or not; 403 carries the insufficient_scope challenge', async () => {
    const { token } = await getToken('tsl_read', 'tsk_read');
    for (const query of ['?permission=transaction:charge', '?permission=transaction:charge&authenticated=true']) {
      const answer = await forwardAuth(query, token);
      expectProblem(answer, 403, 'urn:tessera:problem:forbidden');
      expect(answer.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="transaction:charge"');
    }
    expect((await forwardAuth('?permission=reports:read', token)).statusCode).toBe(200);
  });

  it('a permission that is not an RFC 6750 scope token (a space, a quote, a backslash) is 400', async () => {
    const { token } = await getToken();
    for (const permission of ['a%20b', 'a%22b', 'a%5Cb', 'x'.repeat(129)]) {
      const problem = expectProblem(await forwardAuth(`?permission=${permission}`, token), 400, 'urn:tessera:problem:bad-request');
      expect(problem.errors).toEqual([{ field: 'permission', message: expect.any(String) }]);
    }
  });
});

describe('v1 (/v1/authenticate and a protected v1 request)', () => {
  it('/v1/authenticate takes a form body and answers the token with no-store; it opens /v1/account and not the v5 routes', async () => {
    const answer = await postRaw('/v1/authenticate', 'apiid=tla_charge&apikey=tlk_charge', 'application/x-www-form-urlencoded');
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    const { result } = answer.json<{ result: { authentication_token: string; expires_in_seconds: number } }>();
    expect(result.expires_in_seconds).toBe(1800);
    const account = await app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${result.authentication_token}` } });
    expect(account.statusCode).toBe(200);
    expect(account.json()).toEqual({ account_id: 'acct-charge', name: 'Shop acct-charge' });
    expectProblem(await charge(result.authentication_token), 401);
  });

  it('refuses JSON with 415, a missing field with 400, and a wrong key with 401 and no challenge', async () => {
    expectProblem(await postJson('/v1/authenticate', { apiid: 'tla_charge', apikey: 'tlk_charge' }), 415);
    expectProblem(await postRaw('/v1/authenticate', 'apiid=tla_charge', 'application/x-www-form-urlencoded'), 400);
    const wrongKey = await postRaw('/v1/authenticate', 'apiid=tla_charge&apikey=wrong', 'application/x-www-form-urlencoded');
    expectProblem(wrongKey, 401, 'urn:tessera:problem:invalid-credentials');
    // A credential endpoint, not a bearer-protected one: no Bearer challenge.
    expect(wrongKey.headers['www-authenticate']).toBeUndefined();
  });
});
