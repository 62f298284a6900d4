import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * The audit routes of the admin API as another team's tool calls them: over HTTPS on a running
 * all-in-one's admin listener, with an admin token the CLI made.
 */
let server: TesseraProcess;
let account: Credentials;
let reader: string;
let revoker: string;
const within = { timeout: 2_000, interval: 50 };
beforeAll(async () => {
  server = await startTessera();
  account = await server.createAccount({ name: 'Audited shop' });
  const token = async (scope: string) =>
    (JSON.parse((await server.tessera(['admin-tokens', 'create', '--name', scope, '--scope', scope, '--json'])).stdout) as { admin_token: string }).admin_token;
  reader = await token('audit:read');
  revoker = await token('tokens:revoke');
});
afterAll(async () => {
  await server?.stop();
});

const get = (path: string, adminToken: string | undefined, accept?: string) =>
  server.adminRequest(path, { headers: { ...(adminToken ? { authorization: `Bearer ${adminToken}` } : {}), ...(accept ? { accept } : {}) } });

describe('GET /admin/v1/events', () => {
  it('answers the account\'s events in log order, with the contract\'s fields and no secret, and the log position it reflects', async () => {
    const pair = (await server.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as {
      refresh_token: string;
    };
    await server.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token });
    const path = `/admin/v1/events?account=${account.account_id}&type=TokenIssued&type=TokenRevoked`;
    await expect.poll(async () => ((await get(path, reader)).json() as { events: unknown[] }).events.length, within).toBeGreaterThanOrEqual(3);
    const answer = await get(path, reader);
    expect(answer.status).toBe(200);
    expect(answer.headers['x-tessera-log-position']).toMatch(/^\d+$/);
    const body = answer.json() as { events: Record<string, unknown>[]; next_cursor: string | null };
    expect(body.next_cursor).toBeNull();
    for (const event of body.events) {
      expect(Object.keys(event)).toEqual(expect.arrayContaining(['position', 'type', 'time', 'account_id', 'family_id', 'generation', 'reason', 'request_id', 'source_address']));
      expect(event.account_id).toBe(account.account_id);
    }
    const positions = body.events.map((event) => BigInt(event.position as string));
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
    expect(body.events.at(-1)?.type).toBe('TokenRevoked');
    expect(answer.text).not.toContain(account.transaction_key);
    expect(answer.text).not.toContain(pair.refresh_token);
    expect(answer.text).not.toMatch(/hash/i);
  });

  it('streams the same rows as NDJSON with Accept: application/x-ndjson', async () => {
    const path = `/admin/v1/events?account=${account.account_id}`;
    const json = (await get(path, reader)).json() as { events: unknown[] };
    const ndjson = await get(path, reader, 'application/x-ndjson');
    expect(ndjson.status).toBe(200);
    expect(ndjson.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(ndjson.text.trim().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual(json.events);
  });

  it('needs an admin token with audit:read: 401 without one, 403 with another scope; a bad filter is 400 naming it', async () => {
    expect((await get('/admin/v1/events', undefined)).status).toBe(401);
    const forbidden = await get('/admin/v1/events', revoker);
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="audit:read"');
    const bad = await get('/admin/v1/events?since=yesterday', reader);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('since');
  });
});

describe('GET /admin/v1/accounts/{account_id}/access-at', () => {
  // The answer for an instant in the past, between an issue and a revocation seconds apart, is
  // checked in process on a manual clock (services/all-in-one/src/access-at-history.int.test.ts),
  // where those seconds pass without being waited for; here, the process's own wiring.
  it('names the family that holds a usable access token now, and not after its revocation', async () => {
    const pair = (await server.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as {
      token: string;
      refresh_token: string;
    };
    const familyId = (JSON.parse(Buffer.from(pair.token.split('.')[1]!, 'base64url').toString()) as { fid: string }).fid;
    const families = async (at: string) =>
      ((await get(`/admin/v1/accounts/${account.account_id}/access-at?at=${encodeURIComponent(at)}`, reader)).json() as { families: { family_id: string }[] }).families.map(
        (family) => family.family_id,
      );
    await expect.poll(async () => families(new Date().toISOString()), within).toContain(familyId);
    await server.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token });
    await expect.poll(async () => families(new Date().toISOString()), within).not.toContain(familyId);
  });
});
