import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, FastifyReply, FastifyRequest, LightMyRequestResponse } from 'fastify';
import { streams, type TesseraEvent } from '@tessera/events';
import { InMemoryEventStore } from '@tessera/event-store';
import { sendProblem, unauthorized } from '@tessera/http';
import { AuditIndex, followIntoIndex, type AuditReadModel, type IndexFollower } from '@tessera/audit';
import { createMetrics, createReadiness } from '@tessera/host';
import { buildApp } from '@tessera/server';
import { auditRoutes } from './audit-routes.js';

/**
 * GET /admin/v1/events and GET /admin/v1/accounts/{id}/access-at through fastify's inject(), on
 * an audit index (in memory) following an in-memory log. The admin-token check is a stand-in.
 */
const t0 = Date.parse('2026-11-22T14:00:00Z');
const hash = 'H'.repeat(43);
let clock = t0;
let store: InMemoryEventStore;
let index: AuditIndex;
let follower: IndexFollower;
let app: FastifyInstance;
let unavailable: string | undefined;
const scopesAsked: string[] = [];

/** Stands in for the admin-token check (another package's): lets `Bearer stand-in:<scope>` through, else 401. */
const standInRequireScope = (scope: string) => {
  scopesAsked.push(scope);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.headers.authorization !== `Bearer stand-in:${scope}`) return sendProblem(reply, unauthorized('stand-in admin token check: refused'));
    return undefined;
  };
};

async function append(stream: string, event: TesseraEvent) {
  await store.append(stream, [{ event, metadata: { requestId: `req-${clock - t0}`, sourceAddress: '192.0.2.7' } }], { expectedRevision: 'any' });
  clock += 60_000;
}
const seconds = () => Math.floor(clock / 1000);

beforeAll(async () => {
  store = new InMemoryEventStore({ clock: { now: () => clock } });
  for (const accountId of ['acct_1', 'acct_2']) {
    await append(streams.account(accountId), { type: 'AccountRegistered', v: 1, accountId, name: accountId, permissions: [], at: seconds() });
    await append(streams.account(accountId), { type: 'ApiCredentialIssued', v: 1, accountId, credentialId: `cred_${accountId}`, apiLoginId: `tsl_${accountId}`, transactionKeyHash: hash, at: seconds() });
    for (const familyId of [`fam_${accountId}_a`, `fam_${accountId}_b`]) {
      await append(streams.family(familyId), {
        type: 'TokenIssued',
        v: 1,
        familyId,
        accountId,
        credentialId: `cred_${accountId}`,
        apiLoginId: `tsl_${accountId}`,
        generation: 0,
        refreshTokenHash: hash,
        jti: `jti_${familyId}`,
        scope: [],
        issuedAt: seconds(),
        accessExpiresAt: seconds() + 3600,
        refreshExpiresAt: seconds() + 86_400,
      });
    }
  }
  index = AuditIndex.open(':memory:');
  follower = followIntoIndex(store, index, { onError: (error) => expect.fail(String(error)) });
  await follower.caughtUp;
  const readModel: AuditReadModel = {
    unavailable: () => unavailable,
    events: async (query) => index.events(query),
    accessAt: async (accountId, at, query) => index.accessAt(accountId, at, query),
    archivePins: () => undefined,
  };
  app = await buildApp({
    logLevel: 'silent',
    readiness: createReadiness(),
    metrics: createMetrics(),
    routes: [auditRoutes({ audit: readModel, requireScope: standInRequireScope, now: () => clock })],
  });
});
afterAll(async () => {
  await app?.close();
  await follower?.close();
  index?.close();
  await store?.close();
});

const admin = { authorization: 'Bearer stand-in:audit:read' };
const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers: { ...admin, ...headers } });
type Row = { position: string; type: string; account_id: string | null };
type Page = { events: Row[]; next_cursor: string | null; log_position: string | null };

function expectBadRequest(answer: LightMyRequestResponse, parameter: string) {
  expect(answer.statusCode).toBe(400);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = answer.json<{ detail: string; errors: { field: string }[] }>();
  expect(problem.errors).toEqual([{ field: parameter, message: expect.any(String) }]);
  expect(problem.detail).toContain(`query parameter ${parameter}`);
}

describe('admin-token check', () => {
  it('both routes ask for audit:read, and answer nothing without it', async () => {
    expect(scopesAsked).toEqual(['audit:read', 'audit:read']);
    for (const url of ['/admin/v1/events', '/admin/v1/accounts/acct_1/access-at?at=2026-11-22T14:05:00Z']) {
      const refused = await app.inject({ method: 'GET', url });
      expect(refused.statusCode).toBe(401);
      expect(refused.body).not.toMatch(/acct_1|fam_/);
    }
  });
});

describe('GET /admin/v1/events', () => {
  it('answers {events, next_cursor, log_position} in log order, no-store, with the position it reflects in X-Tessera-Log-Position', async () => {
    const answer = await get('/admin/v1/events?account=acct_2');
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['x-tessera-log-position']).toBe('8');
    const page = answer.json<Page>();
    expect(page.events.map((row) => [row.position, row.type])).toEqual([
      ['5', 'AccountRegistered'],
      ['6', 'ApiCredentialIssued'],
      ['7', 'TokenIssued'],
      ['8', 'TokenIssued'],
    ]);
    expect(page.events[2]).toEqual({
      position: '7',
      type: 'TokenIssued',
      time: '2026-11-22T14:06:00.000Z',
      account_id: 'acct_2',
      family_id: 'fam_acct_2_a',
      generation: 0,
      reason: null,
      request_id: 'req-360000',
      source_address: '192.0.2.7',
      actor: null,
    });
    expect(page).toMatchObject({ next_cursor: null, log_position: '8' });
    expect(answer.body).not.toContain(hash);
  });

  it('following next_cursor pages through every matching row once, whatever the limit', async () => {
    const positions: string[] = [];
    let url = '/admin/v1/events?type=TokenIssued&type=AccountRegistered&limit=2';
    for (let pages = 1; ; pages += 1) {
      const page = (await get(url)).json<Page>();
      positions.push(...page.events.map((row) => row.position));
      if (page.next_cursor === null) {
        expect(pages).toBe(3);
        break;
      }
      url = `/admin/v1/events?type=TokenIssued&type=AccountRegistered&limit=2&cursor=${page.next_cursor}`;
    }
    expect(positions).toEqual(['1', '3', '4', '5', '7', '8']);
  });

  it('Accept: application/x-ndjson streams the same rows, one JSON object per line, and the next cursor in a header', async () => {
    const url = `/admin/v1/events?limit=3&cursor=${(await get('/admin/v1/events?limit=2')).json<Page>().next_cursor}`;
    const json = (await get(url)).json<Page>();
    const answer = await get(url, { accept: 'application/x-ndjson' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(answer.headers['x-tessera-log-position']).toBe('8');
    expect(answer.headers['x-tessera-next-cursor']).toBe(json.next_cursor);
    const lines = answer.body.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line) as Row)).toEqual(json.events);
    expect(json.events.map((row) => row.position)).toEqual(['3', '4', '5']);
  });

  it.each([
    ['account=', 'account'],
    ['account=a&account=b', 'account'],
    ['acount=acct_1', 'acount'],
    ['type=TokenMinted', 'type'],
    ['since=yesterday', 'since'],
    ['since=2026-11-22T14:00:00', 'since'],
    ['since=2026-11-22T15:00:00Z&until=2026-11-22T14:00:00Z', 'until'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
    ['cursor=not-ours', 'cursor'],
  ])('?%s is 400 problem+json naming %s', async (query, parameter) => {
    expectBadRequest(await get(`/admin/v1/events?${query}`), parameter);
  });

  it('while the index catches up with the log, answers 503 saying so rather than a partial trail', async () => {
    unavailable = 'the audit index is catching up with the event log (at position 3); try again shortly';
    try {
      for (const url of ['/admin/v1/events?account=acct_1', '/admin/v1/accounts/acct_1/access-at?at=2026-11-22T14:05:00Z']) {
        const answer = await get(url);
        expect(answer.statusCode).toBe(503);
        expect(answer.headers['retry-after']).toBe('1');
        expect(answer.json()).toMatchObject({ detail: unavailable });
      }
    } finally {
      unavailable = undefined;
    }
  });
});

describe('GET /admin/v1/accounts/{account_id}/access-at', () => {
  it('answers {at, families, legacy_tokens, log_position, next_cursor} for the instant asked about', async () => {
    const answer = await get('/admin/v1/accounts/acct_1/access-at?at=2026-11-22T14:02:30.250%2B01:00');
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['x-tessera-log-position']).toBe('8');
    // 14:02:30.250+01:00 is 13:02 UTC: before any token.
    expect(answer.json()).toEqual({ at: '2026-11-22T13:02:30.250Z', families: [], legacy_tokens: [], log_position: '8', next_cursor: null });
    const later = (await get('/admin/v1/accounts/acct_1/access-at?at=2026-11-22T14:02:30Z')).json<{ families: unknown[] }>();
    expect(later.families).toEqual([
      { family_id: 'fam_acct_1_a', generation: 0, issued_at: '2026-11-22T14:02:00.000Z', expires_at: '2026-11-22T15:02:00.000Z', credential_id: 'cred_acct_1' },
    ]);
  });

  it('an account the log never named is 404 problem+json', async () => {
    const answer = await get('/admin/v1/accounts/acct_nobody/access-at?at=2026-11-22T14:05:00Z');
    expect(answer.statusCode).toBe(404);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it.each([
    ['', 'at'],
    ['at=14:03', 'at'],
    ['at=2026-11-22T14:03:00Z&at=2026-11-22T14:04:00Z', 'at'],
    // The injected clock is at 14:08.
    ['at=2026-11-22T14:09:00Z', 'at'],
    ['at=2026-11-22T14:03:00Z&account=acct_1', 'account'],
  ])('?%s is 400 problem+json naming %s', async (query, parameter) => {
    expectBadRequest(await get(`/admin/v1/accounts/acct_1/access-at?${query}`), parameter);
  });
});
