import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { listAccounts } from '@tessera/accounts';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { EventStoreUnavailable } from '@tessera/event-store';
import { streams } from '@tessera/events';
import { epochSeconds, systemClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * The admin API's account routes in the all-in-one as `tessera start` wires it, through inject():
 * the scopes they need, the account service's rules as 400s that change nothing, the audit trail
 * each change leaves, and a store that cannot take the append as a 503.
 */
let tessera: InProcessAllInOne;
let admin: FastifyInstance;
const tokens = { writer: { id: '', token: '' }, reader: { id: '', token: '' }, auditor: { id: '', token: '' } };

beforeAll(async () => {
  tessera = await startInProcess();
  admin = tessera.admin;
  const service = createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'cli' });
  for (const [which, scopes] of [
    ['writer', ['accounts:write', 'accounts:read']],
    ['reader', ['accounts:read']],
    ['auditor', ['audit:read']],
  ] as const) {
    const created = await service.create({ name: which, scopes });
    tokens[which] = { id: created.id, token: created.adminToken };
  }
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

const send = (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown, token: string | null = tokens.writer.token) =>
  admin.inject({
    method,
    url,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
const accountCount = async () => (await listAccounts(tessera.store)).length;
async function createAccount(name = 'Shop'): Promise<{ account_id: string; api_login_id: string }> {
  const answer = await send('POST', '/admin/v1/accounts', { name, permissions: ['transaction:charge'] });
  expect(answer.statusCode).toBe(201);
  return answer.json();
}

describe('scopes', () => {
  it('no token is 401; a token without the route\'s scope is 403 naming it, and nothing is made', async () => {
    const before = await accountCount();
    // null: no Authorization header at all.
    expect((await send('GET', '/admin/v1/accounts', undefined, null)).statusCode).toBe(401);
    const readerWrites = await send('POST', '/admin/v1/accounts', { name: 'No', permissions: [] }, tokens.reader.token);
    expect(readerWrites.statusCode).toBe(403);
    expect(readerWrites.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="accounts:write"');
    const auditorReads = await send('GET', '/admin/v1/accounts', undefined, tokens.auditor.token);
    expect(auditorReads.statusCode).toBe(403);
    expect(auditorReads.headers['www-authenticate']).toContain('scope="accounts:read"');
    const { account_id } = await createAccount();
    for (const [method, path, body] of [
      ['POST', `/admin/v1/accounts/${account_id}/rotate-key`, undefined],
      ['PUT', `/admin/v1/accounts/${account_id}/permissions`, { permissions: [] }],
      ['PUT', `/admin/v1/accounts/${account_id}/audiences`, { audiences: [] }],
      ['PUT', `/admin/v1/accounts/${account_id}/client-keys`, { none: true }],
      ['PUT', `/admin/v1/accounts/${account_id}/dpop`, { dpop_bound_access_tokens: true }],
      ['POST', `/admin/v1/accounts/${account_id}/legacy-keys`, undefined],
      ['POST', `/admin/v1/accounts/${account_id}/legacy-keys/tla_x/revoke`, undefined],
    ] as const) {
      expect((await send(method, path, body, tokens.reader.token)).statusCode, `${method} ${path}`).toBe(403);
    }
    expect((await send('GET', `/admin/v1/accounts/${account_id}`, undefined, tokens.reader.token)).statusCode).toBe(200);
    expect(await accountCount()).toBe(before + 1);
  });
});

describe('the account service\'s rules', () => {
  it('a create the CLI would refuse is a 400 problem+json, and no account is made', async () => {
    const before = await accountCount();
    for (const body of [
      { name: 'No permissions member' },
      { name: '   ', permissions: [] },
      { name: 'Bell\u0007', permissions: [] },
      { name: 'x'.repeat(201), permissions: [] },
      { name: 'Bad permission', permissions: ['has space'] },
      { name: 'Unknown member', permissions: [], admin: true },
      { permissions: [] },
    ]) {
      const answer = await send('POST', '/admin/v1/accounts', body);
      expect(answer.statusCode, JSON.stringify(body)).toBe(400);
      expect(answer.headers['content-type']).toContain('application/problem+json');
    }
    expect(await accountCount()).toBe(before);
  });

  it('changes the CLI would refuse are 400s that change nothing; an unknown account or API ID is 404', async () => {
    const { account_id } = await createAccount('Rules');
    const path = `/admin/v1/accounts/${account_id}`;
    const eventsBefore = (await tessera.store.readStream(streams.account(account_id))).length;
    const privateKey = { kty: 'EC', crv: 'P-256', kid: 'k1', x: 'AAAA', y: 'BBBB', d: 'CCCC' };
    for (const [method, suffix, body] of [
      ['PUT', '/audiences', { audiences: ['https://api.example/#fragment'] }],
      ['PUT', '/audiences', { audiences: ['not a uri'] }],
      ['PUT', '/client-keys', { jwks: { keys: [privateKey] } }],
      ['PUT', '/client-keys', { jwks: { keys: [] }, none: true }],
      ['PUT', '/client-keys', { jwks_uri: 'https://user:password@keys.example/jwks' }],
      ['PUT', '/client-keys', { jwks_uri: 'http://keys.example/jwks' }],
      ['PUT', '/dpop', {}],
      ['PUT', '/permissions', { permissions: ['ok', 'not ok'] }],
      ['POST', '/rotate-key', { revoke_tokens: 'yes' }],
    ] as const) {
      const answer = await send(method, `${path}${suffix}`, body);
      expect(answer.statusCode, `${suffix} ${JSON.stringify(body)}`).toBe(400);
    }
    expect((await tessera.store.readStream(streams.account(account_id))).length).toBe(eventsBefore);
    expect((await send('PUT', '/admin/v1/accounts/no-such-account/audiences', { audiences: [] })).statusCode).toBe(404);
    expect((await send('POST', `${path}/legacy-keys/tla_unknown/revoke`)).statusCode).toBe(404);
    expect((await send('POST', `${path}/rotate-key`, { api_login_id: 'tsl_unknown' })).statusCode).toBe(404);
  });

  it('pages are bounded: a limit over the largest page, or a cursor not of this list, is a 400', async () => {
    expect((await send('GET', '/admin/v1/accounts?limit=501')).statusCode).toBe(400);
    expect((await send('GET', '/admin/v1/accounts?cursor=bm8tc3VjaC1hY2NvdW50')).statusCode).toBe(400);
    expect((await send('GET', '/admin/v1/accounts?unknown=1')).statusCode).toBe(400);
  });
});

describe('the audit trail and outages', () => {
  it('each change names admin:<admin token id>, the request id and the source address', async () => {
    const { account_id } = await createAccount('Audited');
    // The first cut starts the families read model: until it has caught up the answer is 503 with
    // Retry-After, and nothing is appended; a client sends it again, as here.
    let rotate = await send('POST', `/admin/v1/accounts/${account_id}/rotate-key`, { revoke_tokens: true });
    for (let attempt = 0; rotate.statusCode === 503 && attempt < 20; attempt += 1) {
      expect(rotate.headers['retry-after']).toBeDefined();
      rotate = await send('POST', `/admin/v1/accounts/${account_id}/rotate-key`, { revoke_tokens: true });
    }
    expect(rotate.statusCode).toBe(200);
    expect(rotate.json()).toMatchObject({ account_id, tokens_revoked_before: expect.stringMatching(/^\d{4}-/) });
    const recorded = await tessera.store.readStream(streams.account(account_id));
    expect(recorded.length).toBeGreaterThan(2);
    for (const { metadata } of recorded) {
      expect(metadata).toMatchObject({ actor: `admin:${tokens.writer.id}`, accountId: account_id, requestId: expect.any(String), sourceAddress: expect.any(String) });
    }
  });

  it('a store that cannot take the append is a 503 with Retry-After, and nothing is made', async () => {
    const before = await accountCount();
    const append = tessera.store.append;
    tessera.store.append = () => Promise.reject(new EventStoreUnavailable('the store is down'));
    try {
      const answer = await send('POST', '/admin/v1/accounts', { name: 'During an outage', permissions: [] });
      expect(answer.statusCode).toBe(503);
      expect(answer.headers['retry-after']).toBeDefined();
      expect(answer.body).not.toContain('tsk_');
    } finally {
      tessera.store.append = append;
    }
    expect(await accountCount()).toBe(before);
  });
});
