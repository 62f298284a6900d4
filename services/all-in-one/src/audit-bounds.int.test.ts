import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { accessAtPlanIn } from '@tessera/audit/testing';
import { streams, type TesseraEvent } from '@tessera/events';
import { revocations, writeBulkLog, type BulkEntry } from '@tessera/event-store-sqlite/testing';
import { ManualClock, epochSeconds } from '@tessera/timing';
import { blockedLoopProbe } from '../../../test/support/blocked-loop-probe.js';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * The audit answers of the all-in-one as `tessera start` wires it, on a long log: access-at in
 * pages, every query within TESSERA_AUDIT_QUERY_BUDGET_MS (503 past it), both answered off the
 * request thread, and query plans that do not depend on how large the index was at start.
 */
const T = 1_900_000_000;
const hash = 'H'.repeat(43);
const live = 250;
const dead = 60_000;

function issued(accountId: string, familyId: string, issuedAt: number): BulkEntry {
  const event: TesseraEvent = {
    type: 'TokenIssued', v: 1, familyId, accountId, credentialId: `cred-${accountId}`, apiLoginId: `tsl_${accountId}`, generation: 0,
    refreshTokenHash: hash, jti: `jti-${familyId}`, scope: [], issuedAt, accessExpiresAt: issuedAt + 3600, refreshExpiresAt: issuedAt + 86_400,
  };
  return { stream: streams.family(familyId), event, recordedAt: issuedAt * 1000 };
}
function registered(accountId: string, at: number): BulkEntry {
  return { stream: streams.account(accountId), event: { type: 'AccountRegistered', v: 1, accountId, name: accountId, permissions: [], at }, recordedAt: at * 1000 };
}
/** One account with 60,000 families a month old and 250 issued in the last hour; 60,000 revocations of other accounts' families. */
function* history(): Generator<BulkEntry> {
  yield registered('acct-big', T - 40 * 86_400);
  for (let i = 0; i < dead; i += 1) yield issued('acct-big', `big-dead-${i}`, T - 30 * 86_400 + Math.floor(i / 10));
  for (let i = 0; i < live; i += 1) yield issued('acct-big', `big-live-${i}`, T - 3000 + i);
  yield* revocations(dead, (T - 86_400) * 1000);
}

/**
 * Starts on the long log and waits until the audit index has read it all, noting the longest the
 * event loop was held meanwhile (the index's catch-up and the read models' own).
 */
async function start(env: Record<string, string> = {}): Promise<{ tessera: InProcessAllInOne; auditToken: string; catchUpGapMs: number }> {
  const clock = new ManualClock(T * 1000);
  const tessera = await startInProcess({ clock, env, prepare: (dataDir) => writeBulkLog(join(dataDir, 'events.db'), history()) });
  const probe = blockedLoopProbe();
  const service = createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(clock), actor: 'test' });
  const { adminToken } = await service.create({ name: 'auditor', scopes: ['audit:read'] });
  await tessera.caughtUp();
  return { tessera, auditToken: adminToken, catchUpGapMs: probe.stop() };
}
const metric = async (tessera: InProcessAllInOne, name: string) =>
  Number(new RegExp(`^${name} (\\d+)$`, 'm').exec((await tessera.admin.inject({ method: 'GET', url: '/metrics' })).body)?.[1] ?? Number.NaN);
async function indexCaughtUp(tessera: InProcessAllInOne): Promise<void> {
  const head = Number(await tessera.store.headPosition());
  await expect.poll(() => metric(tessera, 'tessera_audit_index_position'), { timeout: 120_000, interval: 100 }).toBeGreaterThanOrEqual(head);
}

describe('access-at in pages, and plans on an index grown live', () => {
  let tessera: InProcessAllInOne;
  let auditToken: string;
  let catchUpGapMs: number;
  beforeAll(async () => {
    ({ tessera, auditToken, catchUpGapMs } = await start());
  }, 180_000);
  afterAll(async () => {
    await tessera?.close();
  });
  const get = (url: string) => tessera.admin.inject({ method: 'GET', url, headers: { authorization: `Bearer ${auditToken}` } });
  const at = new Date(T * 1000).toISOString();

  it('builds its index of 120,000 events off the request thread: the event loop is never held 250 ms meanwhile', () => {
    expect(catchUpGapMs).toBeLessThan(250);
  });

  it('answers 100 tokens by default with a next_cursor, and the cursors walk every usable token once', async () => {
    const seen: string[] = [];
    let url = `/admin/v1/accounts/acct-big/access-at?at=${at}`;
    const sizes: number[] = [];
    for (;;) {
      const response = await get(url);
      expect(response.statusCode).toBe(200);
      const body = response.json<{ families: { family_id: string }[]; next_cursor: string | null }>();
      sizes.push(body.families.length);
      seen.push(...body.families.map((family) => family.family_id));
      if (body.next_cursor === null) break;
      url = `/admin/v1/accounts/acct-big/access-at?at=${at}&cursor=${body.next_cursor}`;
    }
    expect(sizes).toEqual([100, 100, 50]);
    expect(new Set(seen).size).toBe(live);
    expect(seen.every((familyId) => familyId.startsWith('big-live-'))).toBe(true);
  });

  it('takes limit up to 1000 and refuses more, or a cursor it did not give out, with 400 naming the parameter', async () => {
    const all = (await get(`/admin/v1/accounts/acct-big/access-at?at=${at}&limit=1000`)).json<{ families: unknown[]; next_cursor: string | null }>();
    expect(all.families).toHaveLength(live);
    expect(all.next_cursor).toBeNull();
    for (const [query, parameter] of [['limit=1001', 'limit'], ['limit=0', 'limit'], ['cursor=Zm9v', 'cursor']] as const) {
      const refused = await get(`/admin/v1/accounts/acct-big/access-at?at=${at}&${query}`);
      expect(refused.statusCode).toBe(400);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.body).toContain(parameter);
    }
  });

  it('an instant before the account existed is an empty answer', async () => {
    const response = await get('/admin/v1/accounts/acct-big/access-at?at=1970-01-01T00:00:00Z');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ families: [], legacy_tokens: [], next_cursor: null });
  });

  it('an index that grew while the server ran keeps true statistics, and access-at reads the account\'s grants index', async () => {
    // The server started on 120,000 events; 130,000 more families arrive while it runs.
    const before = Number(await tessera.store.headPosition());
    for (let batch = 0; batch < 130; batch += 1) {
      const entries = Array.from({ length: 1000 }, (_, i) => issued('acct-grown', `grown-${batch}-${i}`, T - 3000));
      await tessera.store.append(streams.family(`grown-batch-${batch}`), entries.map(({ event }) => ({ event, metadata: {} })), { expectedRevision: 'any' });
    }
    expect(Number(await tessera.store.headPosition())).toBe(before + 130_000);
    await indexCaughtUp(tessera);
    const reader = new Database(join(tessera.dataDir, 'audit-index.db'), { readonly: true });
    try {
      const stat = reader.prepare<[], string>("SELECT stat FROM sqlite_stat1 WHERE idx = 'grants_account'").pluck().get();
      // Taken after the index doubled: it counted more grants than the server started with.
      expect(Number(stat?.split(' ')[0])).toBeGreaterThan(dead + live);
      expect(accessAtPlanIn(reader).join('\n')).toMatch(/USING INDEX grants_account/);
    } finally {
      reader.close();
    }
  }, 180_000);
});

describe('the query budget', () => {
  let tessera: InProcessAllInOne;
  let auditToken: string;
  beforeAll(async () => {
    ({ tessera, auditToken } = await start({ TESSERA_AUDIT_QUERY_BUDGET_MS: '10' }));
  }, 180_000);
  afterAll(async () => {
    await tessera?.close();
  });

  it('a query that visits 60,000 rows answers 503 problem+json naming the budget, and the event loop stays free meanwhile', async () => {
    const probe = blockedLoopProbe();
    // The account's 60,250 families against the log's 60,000 revocations: none is both.
    const response = await tessera.admin.inject({ method: 'GET', url: '/admin/v1/events?account=acct-big&type=TokenRevoked', headers: { authorization: `Bearer ${auditToken}` } });
    const longestGapMs = probe.stop();
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({ status: 503, detail: expect.stringMatching(/time budget of 10 ms \(TESSERA_AUDIT_QUERY_BUDGET_MS\): narrow it/) });
    expect(longestGapMs).toBeLessThan(100);
    // A narrow query still answers under the same budget.
    const narrow = await tessera.admin.inject({ method: 'GET', url: '/admin/v1/events?family=big-live-7', headers: { authorization: `Bearer ${auditToken}` } });
    expect(narrow.statusCode).toBe(200);
    expect(narrow.json<{ events: unknown[] }>().events).toHaveLength(1);
  });
});
