import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/** The older interface (/v1/authenticate, its token's life and states, protected v1 requests), apart from v5, over HTTPS. */
let tessera: TesseraProcess;
let account: Credentials;
beforeAll(async () => {
  tessera = await startTessera({ TESSERA_LEGACY_TOKEN_TTL: '2' });
  account = await tessera.createAccount({ legacy: true, name: 'Legacy shop' });
});
afterAll(async () => {
  await tessera?.stop();
});

const authenticate = (fields: Record<string, string>, contentType = 'application/x-www-form-urlencoded') =>
  tessera.request('/v1/authenticate', {
    method: 'POST',
    headers: { 'content-type': contentType, 'cache-control': 'no-cache' },
    body: new URLSearchParams(fields).toString(),
  });
const legacyToken = async (apiid = account.apiid!, apikey = account.apikey!) => {
  const answer = await authenticate({ apiid, apikey });
  expect(answer.status).toBe(200);
  return (answer.json().result as { authentication_token: string; expires_in_seconds: number }).authentication_token;
};
const v1Account = (token: string, scheme = 'bearer') =>
  tessera.request('/v1/account', { headers: { authorization: `${scheme} ${token}`, 'content-type': 'application/json', 'cache-control': 'no-cache' } });
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, number | string>;

describe('POST /v1/authenticate', () => {
  it('answers {"result": {authentication_token, expires_in_seconds}} with the configured life, durably logged', async () => {
    const log = new SqliteEventStore({ file: join(tessera.dataDir, 'events.db') });
    const before = await log.headPosition();
    const answer = await authenticate({ apiid: account.apiid!, apikey: account.apikey! });
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    const body = answer.json() as { result: { authentication_token: string; expires_in_seconds: number } };
    expect(Object.keys(body)).toEqual(['result']);
    expect(Object.keys(body.result).sort()).toEqual(['authentication_token', 'expires_in_seconds']);
    expect(body.result.expires_in_seconds).toBe(2);
    const claims = claimsOf(body.result.authentication_token);
    expect(Number(claims.exp) - Number(claims.iat)).toBe(body.result.expires_in_seconds);
    const appended = await log.readAll({ after: before, types: ['LegacyTokenIssued'] });
    expect(appended.map((e) => e.event)).toEqual([expect.objectContaining({ type: 'LegacyTokenIssued', accountId: account.account_id, jti: claims.jti })]);
    await log.close();
  });

  it('400 for a missing or empty field', async () => {
    const bodies: Record<string, string>[] = [{ apiid: account.apiid! }, { apikey: account.apikey! }, { apiid: '', apikey: account.apikey! }, { apiid: account.apiid!, apikey: '' }];
    for (const fields of bodies) {
      const answer = await authenticate(fields);
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  it('415 for a JSON or other non-form body', async () => {
    const json = await tessera.request('/v1/authenticate', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiid: account.apiid, apikey: account.apikey }),
    });
    expect(json.status).toBe(415);
    expect((await authenticate({ apiid: 'a', apikey: 'b' }, 'text/plain')).status).toBe(415);
  });

  it('401 for a wrong key, and v5 credentials never authenticate here', async () => {
    expect((await authenticate({ apiid: account.apiid!, apikey: `${account.apikey}x` })).status).toBe(401);
    const v5 = await authenticate({ apiid: account.api_login_id, apikey: account.transaction_key });
    expect(v5.status).toBe(401);
    // A credential endpoint is not bearer-protected: no Bearer challenge.
    expect(v5.headers['www-authenticate']).toBeUndefined();
  });

  it('legacy credentials never authenticate on v5', async () => {
    const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.apiid, transaction_key: account.apikey });
    expect(answer.status).toBe(401);
  });
});

describe('protected v1 requests', () => {
  it('GET /v1/account answers the account id and name, with the bearer scheme in any case', async () => {
    const token = await legacyToken();
    for (const scheme of ['bearer', 'Bearer', 'BEARER']) {
      const answer = await v1Account(token, scheme);
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ account_id: account.account_id, name: 'Legacy shop' });
    }
  });

  it('a legacy token gets 401 on v5 routes and a v5 token gets 401 on v1 routes', async () => {
    const token = await legacyToken();
    const onV5 = await tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(onV5.status).toBe(401);
    const pair = (
      await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })
    ).json() as { token: string };
    expect((await v1Account(pair.token)).status).toBe(401);
  });

  it('a v1 token valid → expired after expires_in_seconds: then 401', async () => {
    const answer = await authenticate({ apiid: account.apiid!, apikey: account.apikey! });
    const { authentication_token: token, expires_in_seconds: life } = answer.json().result as { authentication_token: string; expires_in_seconds: number };
    expect((await v1Account(token)).status).toBe(200);
    // Refused once its life has passed, and not before: the wait ends at the first 401.
    const { answer: expired, elapsedMs } = await until(() => v1Account(token), 'the v1 token to expire', { done: (answer) => answer.status !== 200, timeoutMs: life * 1000 + 5_000, everyMs: 100 });
    expect(elapsedMs).toBeGreaterThanOrEqual((life - 1) * 1000);
    expect(expired.status).toBe(401);
    expect(expired.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('the forward-auth endpoint handles v1 tokens when asked for the v1 interface', async () => {
    const token = await legacyToken();
    const asV1 = await tessera.request('/forward-auth?interface=v1&authenticated=true', { headers: { authorization: `bearer ${token}` } });
    expect(asV1.status).toBe(200);
    expect(asV1.headers['x-tessera-subject']).toBe(account.account_id);
    expect((await tessera.request('/forward-auth?interface=v5&authenticated=true', { headers: { authorization: `bearer ${token}` } })).status).toBe(401);
  });
});

describe('legacy credentials from the CLI', () => {
  it('add-legacy-key gives a working pair; revoke-legacy-key makes it 401', async () => {
    const plain = await tessera.createAccount({ name: 'Later legacy' });
    const { stdout } = await tessera.tessera(['accounts', 'add-legacy-key', '--account', plain.account_id, '--json']);
    const added = JSON.parse(stdout) as { apiid: string; apikey: string };
    await expect.poll(async () => (await authenticate({ apiid: added.apiid, apikey: added.apikey })).status, { timeout: 1000 }).toBe(200);
    await tessera.tessera(['accounts', 'revoke-legacy-key', '--account', plain.account_id, '--apiid', added.apiid]);
    await expect.poll(async () => (await authenticate({ apiid: added.apiid, apikey: added.apikey })).status, { timeout: 1000 }).toBe(401);
  });
});

describe('TESSERA_LEGACY_PORT', () => {
  it('serves v1 on its own HTTPS listener and v5 only on the main one', async () => {
    const apart = await startTessera({ TESSERA_LEGACY_PORT: '0' });
    try {
      const creds = await apart.createAccount({ legacy: true });
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const body = new URLSearchParams({ apiid: creds.apiid!, apikey: creds.apikey! }).toString();
      const onLegacy = await apart.request('/v1/authenticate', { method: 'POST', headers: form, body, legacy: true });
      expect(onLegacy.status).toBe(200);
      expect((await apart.request('/v1/authenticate', { method: 'POST', headers: form, body })).status).toBe(404);
      const token = (onLegacy.json().result as { authentication_token: string }).authentication_token;
      expect((await apart.request('/v1/account', { headers: { authorization: `bearer ${token}` }, legacy: true })).status).toBe(200);
      const v5OnLegacy = await apart.request('/v5/Authorization/get-oauth-token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_login_id: creds.api_login_id, transaction_key: creds.transaction_key }),
        legacy: true,
      });
      expect(v5OnLegacy.status).toBe(404);
    } finally {
      await apart.stop();
    }
  });
});
