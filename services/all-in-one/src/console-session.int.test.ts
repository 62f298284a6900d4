import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createAdminTokenService, type AdminTokenService } from '@tessera/admin-tokens';
import { epochSeconds, systemClock } from '@tessera/timing';
import { until } from '../../../test/support/until.js';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * The admin console's sessions in the all-in-one as `tessera start` wires it, through inject():
 * sign-in, the cookie, the admin API with the cookie and the token's scopes, CSRF on every change,
 * and the admin token's revocation ending the session. The browser's side is test/e2e/console.test.ts.
 */
let tessera: InProcessAllInOne;
let admin: FastifyInstance;
let service: AdminTokenService;
const host = 'tessera.internal:9443';
const sameSite = { host, 'sec-fetch-site': 'same-origin' };

beforeAll(async () => {
  tessera = await startInProcess();
  admin = tessera.admin;
  service = createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'cli' });
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

async function adminToken(scopes: Parameters<AdminTokenService['create']>[0]['scopes'], expiresInSeconds?: number): Promise<{ id: string; adminToken: string }> {
  const created = await service.create({ name: 'console user', scopes, ...(expiresInSeconds === undefined ? {} : { expiresInSeconds }) });
  await tessera.caughtUp();
  return created;
}

async function signIn(token: string): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const answer = await admin.inject({ method: 'POST', url: '/console/session', headers: { ...sameSite, 'content-type': 'application/json' }, payload: JSON.stringify({ admin_token: token }) });
  expect(answer.statusCode, answer.body).toBe(200);
  const setCookie = String(answer.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0]!, csrf: answer.json<{ csrf_token: string }>().csrf_token, setCookie };
}

describe('console sign-in', () => {
  it('sets a __Host- cookie HttpOnly, Secure, SameSite=Strict, Path=/ for 8 hours that holds the token id, never the token', async () => {
    const { id, adminToken: token } = await adminToken(['accounts:read']);
    const { setCookie, cookie } = await signIn(token);
    expect(setCookie).toMatch(/^__Host-tessera-console=[^;]+; Path=\/; Max-Age=28800; HttpOnly; Secure; SameSite=Strict$/);
    expect(cookie).not.toContain(token);
    // The cookie's payload is JSON, of which only tid is read here.
    const payload = JSON.parse(Buffer.from(cookie.split('=')[1]!.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(payload.tid).toBe(id);
    const session = await admin.inject({ method: 'GET', url: '/console/session', headers: { cookie } });
    expect(session.json()).toMatchObject({ admin_token_id: id, scopes: ['accounts:read'] });
  });

  it("ends no later than its admin token: one expiring in two minutes gets a session of two minutes at most", async () => {
    const { adminToken: token } = await adminToken(['accounts:read'], 120);
    const signedIn = await signIn(token);
    const maxAge = Number(/Max-Age=(\d+)/.exec(signedIn.setCookie)?.[1]);
    expect(maxAge).toBeGreaterThan(100);
    expect(maxAge).toBeLessThanOrEqual(120);
    const session = await admin.inject({ method: 'GET', url: '/console/session', headers: { cookie: signedIn.cookie } });
    expect(Date.parse(session.json<{ expires_at: string }>().expires_at) - Date.now()).toBeLessThanOrEqual(120_000);
  });

  it('refuses an unknown token (401) and a sign-in from another site (403), and sets no cookie', async () => {
    const { adminToken: token } = await adminToken(['accounts:read']);
    const unknown = await admin.inject({ method: 'POST', url: '/console/session', headers: sameSite, payload: { admin_token: 'tsa_nobody' } });
    expect(unknown.statusCode).toBe(401);
    const crossSite = await admin.inject({ method: 'POST', url: '/console/session', headers: { host, 'sec-fetch-site': 'cross-site' }, payload: { admin_token: token } });
    expect(crossSite.statusCode).toBe(403);
    expect(unknown.headers['set-cookie']).toBeUndefined();
    expect(crossSite.headers['set-cookie']).toBeUndefined();
  });

  it('serves the page with a strict CSP and its script from the package, on the admin listener only', async () => {
    const page = await admin.inject({ method: 'GET', url: '/console/' });
    expect(page.statusCode).toBe(200);
    for (const url of ['/console/', '/console/assets/console.js', '/console/session']) expect((await tessera.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'; script-src 'self'; style-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'; form-action 'self'");
    expect(page.body).toContain('<script type="module" src="assets/console.js"></script>');
    const script = await admin.inject({ method: 'GET', url: '/console/assets/console.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect((await admin.inject({ method: 'GET', url: '/console/assets/..%2Fpackage.js' })).statusCode).toBe(400);
  });
});

describe('the admin API with a console session', () => {
  it("reads with the cookie alone, within the token's scopes: another scope's route is 403", async () => {
    const { adminToken: token } = await adminToken(['accounts:read']);
    const { cookie } = await signIn(token);
    expect((await admin.inject({ method: 'GET', url: '/admin/v1/accounts', headers: { cookie } })).statusCode).toBe(200);
    expect((await admin.inject({ method: 'GET', url: '/admin/v1/events', headers: { cookie } })).statusCode).toBe(403);
  });

  it('refuses a change with the cookie alone, with a wrong CSRF token, or from another site (403); makes it with all three', async () => {
    const { adminToken: token } = await adminToken(['accounts:write', 'accounts:read']);
    const { cookie, csrf } = await signIn(token);
    const other = await signIn(token);
    const create = (headers: Record<string, string>) =>
      admin.inject({ method: 'POST', url: '/admin/v1/accounts', headers: { cookie, 'content-type': 'application/json', host, ...headers }, payload: JSON.stringify({ name: 'Console shop', permissions: [] }) });
    expect((await create({})).statusCode).toBe(403);
    expect((await create({ 'sec-fetch-site': 'same-origin' })).statusCode).toBe(403);
    expect((await create({ 'sec-fetch-site': 'same-origin', 'x-tessera-csrf': other.csrf })).statusCode).toBe(403);
    expect((await create({ 'sec-fetch-site': 'cross-site', 'x-tessera-csrf': csrf })).statusCode).toBe(403);
    // Another port of the same host is the same site, and not the same origin.
    expect((await create({ 'sec-fetch-site': 'same-site', 'x-tessera-csrf': csrf })).statusCode).toBe(403);
    expect((await create({ origin: 'https://tessera.internal:8443', 'x-tessera-csrf': csrf })).statusCode).toBe(403);
    expect((await create({ origin: 'https://evil.example', 'x-tessera-csrf': csrf })).statusCode).toBe(403);
    expect((await create({ 'sec-fetch-site': 'same-origin', 'x-tessera-csrf': csrf })).statusCode).toBe(201);
    expect((await create({ origin: `https://${host}`, 'x-tessera-csrf': csrf })).statusCode).toBe(201);
  });

  it('ends every session of an admin token at once when the token is revoked', async () => {
    const { id, adminToken: token } = await adminToken(['accounts:read']);
    const { cookie } = await signIn(token);
    expect((await admin.inject({ method: 'GET', url: '/admin/v1/accounts', headers: { cookie } })).statusCode).toBe(200);
    await service.revoke(id);
    await tessera.caughtUp();
    expect((await admin.inject({ method: 'GET', url: '/admin/v1/accounts', headers: { cookie } })).statusCode).toBe(401);
    const ended = await admin.inject({ method: 'GET', url: '/console/session', headers: { cookie } });
    expect(ended.statusCode).toBe(401);
    expect(ended.json<{ detail: string }>().detail).toContain('revoked or expired');
    expect(String(ended.headers['set-cookie'])).toMatch(/^__Host-tessera-console=; Path=\/; Max-Age=0;/);
  });

  it('sign-out clears the cookie, and needs the CSRF token while the session is live', async () => {
    const { adminToken: token } = await adminToken(['accounts:read']);
    const { cookie, csrf } = await signIn(token);
    expect((await admin.inject({ method: 'DELETE', url: '/console/session', headers: { cookie, ...sameSite } })).statusCode).toBe(403);
    const out = await admin.inject({ method: 'DELETE', url: '/console/session', headers: { cookie, ...sameSite, 'x-tessera-csrf': csrf } });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^__Host-tessera-console=; Path=\/; Max-Age=0;/);
  });
});

describe('GET /admin/v1/accounts/{account_id}/families', () => {
  it("lists an account's live families with generation and expiries, a page at a time; a revoked one leaves the list; an unknown account is 404", async () => {
    const { adminToken: token } = await adminToken(['audit:read', 'accounts:write', 'tokens:revoke']);
    const headers = { authorization: `Bearer ${token}` };
    const account = (await admin.inject({ method: 'POST', url: '/admin/v1/accounts', headers, payload: { name: 'Families', permissions: ['transaction:charge'] } })).json<{ account_id: string; api_login_id: string; transaction_key: string }>();
    await tessera.caughtUp();
    for (let made = 0; made < 3; made += 1) {
      const issued = await tessera.app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: account.api_login_id, transaction_key: account.transaction_key } });
      expect(issued.statusCode).toBe(200);
    }
    const url = `/admin/v1/accounts/${account.account_id}/families`;
    // The families read model starts on first use: until it has caught up (2 s at most on a busy
    // machine) the answer is 503 with Retry-After, and a client tries again, as this test does.
    const { answer: first } = await until(() => admin.inject({ method: 'GET', url: `${url}?limit=2`, headers }), 'the families of the account', {
      done: (reply) => reply.statusCode !== 503 || reply.headers['retry-after'] === undefined,
      timeoutMs: 20_000,
    });
    expect(first.statusCode, first.body).toBe(200);
    const page = first.json<{ families: { family_id: string; generation: number; api_login_id: string; refresh_expires_at: string; home_region: string | null }[]; next_cursor: string | null }>();
    expect(page.families).toHaveLength(2);
    expect(page.families[0]).toMatchObject({ generation: 0, api_login_id: account.api_login_id, home_region: null });
    expect(Date.parse(page.families[0]!.refresh_expires_at)).toBeGreaterThan(Date.now());
    const second = (await admin.inject({ method: 'GET', url: `${url}?limit=2&cursor=${page.next_cursor}`, headers })).json<{ families: { family_id: string }[]; next_cursor: string | null }>();
    expect(second.families).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
    const revoked = page.families[0]!.family_id;
    expect((await admin.inject({ method: 'POST', url: `/admin/v1/families/${revoked}/revoke`, headers })).statusCode).toBe(200);
    const after = (await admin.inject({ method: 'GET', url, headers })).json<{ families: { family_id: string }[] }>();
    expect(after.families.map((family) => family.family_id)).not.toContain(revoked);
    expect(after.families).toHaveLength(2);
    expect((await admin.inject({ method: 'GET', url: '/admin/v1/accounts/acct_nobody/families', headers })).statusCode).toBe(404);
  });
});
