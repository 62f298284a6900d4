import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { streams, type TesseraEvent } from '@tessera/events';
import { InMemoryEventStore } from '@tessera/event-store';
import { AuditIndex } from './audit-index.js';
import { catchUpIndex } from './catch-up.js';
import { parseEventQuery } from './event-query.js';
import { followIntoIndex } from './index-follower.js';
import { AuditQueryOverBudget } from './query-budget.js';
import { accessAtPlanIn, accessAtRowsVisitedIn } from './testing/index-diagnostics.js';

/** The audit index's bounds: access-at in pages, a time budget on every query, and statistics that follow its growth. */
const T = 1_900_000_000;
const hash = 'H'.repeat(43);
let folder: string;
let file: string;
let store: InMemoryEventStore;
const open: AuditIndex[] = [];

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'tessera-audit-bounds-'));
  file = join(folder, 'audit-index.db');
  store = new InMemoryEventStore({ clock: { now: () => T * 1000 } });
});
afterEach(async () => {
  for (const index of open.splice(0)) index.close();
  await store.close();
  rmSync(folder, { recursive: true, force: true });
});
const openIndex = () => {
  const index = AuditIndex.open(file);
  open.push(index);
  return index;
};

/** `count` families of one account, issued one second apart from `issuedAt`, each appended as the issuer would. */
async function families(accountId: string, count: number, options: { issuedAt: number; first?: number; perAppend?: number }): Promise<void> {
  const first = options.first ?? 0;
  const perAppend = options.perAppend ?? 1;
  for (let i = first; i < first + count; i += perAppend) {
    for (let j = i; j < Math.min(i + perAppend, first + count); j += 1) {
      const familyId = `${accountId}-fam-${j}`;
      const issuedAt = options.issuedAt + j;
      const event: TesseraEvent = {
        type: 'TokenIssued', v: 1, familyId, accountId, credentialId: `cred-${accountId}`, apiLoginId: `tsl_${accountId}`, generation: 0,
        refreshTokenHash: hash, jti: `jti-${familyId}`, scope: [], issuedAt, accessExpiresAt: issuedAt + 3600, refreshExpiresAt: issuedAt + 86_400,
      };
      await store.append(streams.family(familyId), [{ event, metadata: {} }], { expectedRevision: 'no_stream' });
    }
  }
}
/** `count` revocations, each of a family of one of a hundred other accounts. */
async function revocationsOfOthers(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const familyId = `other-fam-${i}`;
    const event: TesseraEvent = { type: 'TokenRevoked', v: 1, familyId, accountId: `acct-other-${i % 100}`, generation: 0, revokedAt: T - 60, accessExpiresAt: T + 3000 };
    await store.append(streams.family(familyId), [{ event, metadata: {} }], { expectedRevision: 'any' });
  }
}
async function account(accountId: string): Promise<void> {
  await store.append(streams.account(accountId), [{ event: { type: 'AccountRegistered', v: 1, accountId, name: accountId, permissions: [], at: T - 86_400 }, metadata: {} }], { expectedRevision: 'any' });
}

describe('access-at in pages', () => {
  it('pages of `limit` tokens, each continuing after the last, together hold every usable token once, ordered by expiry', async () => {
    await account('acct-big');
    await families('acct-big', 250, { issuedAt: T - 3000 });
    const index = openIndex();
    await catchUpIndex(index, store);
    const seen: string[] = [];
    const expiries: number[] = [];
    let after: { lastExpiresAt: number; grantId: string } | undefined;
    let pages = 0;
    do {
      const page = index.accessAt('acct-big', T, { limit: 100, ...(after ? { after } : {}) })!;
      expect(page.families.length).toBeLessThanOrEqual(100);
      seen.push(...page.families.map((family) => family.familyId));
      expiries.push(...page.families.map((family) => family.expiresAt));
      after = page.more;
      pages += 1;
    } while (after !== undefined);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
    expect(expiries).toEqual([...expiries].sort((a, b) => a - b));
    // One page answers what the whole question answers.
    expect(new Set(seen)).toEqual(new Set(index.accessAt('acct-big', T)!.families.map((family) => family.familyId)));
  });

  it('a page visits a page of the account\'s grants, not every grant it ever had, on its first page and after a cursor', async () => {
    await account('acct-big');
    // 20,000 families long dead, then 300 usable at T.
    await families('acct-big', 20_000, { issuedAt: T - 200_000, perAppend: 1000 });
    await families('acct-big', 300, { issuedAt: T - 3000 - 20_000, first: 20_000, perAppend: 100 });
    const index = openIndex();
    await catchUpIndex(index, store);
    const first = index.accessAt('acct-big', T, { limit: 100 })!;
    expect(first.families).toHaveLength(100);
    const reader = new Database(file, { readonly: true });
    // A page of 100 reads 101 grants (the last says there is more), and SQLite may look at one past.
    const pageRows = 102;
    try {
      expect(accessAtRowsVisitedIn(reader, 'acct-big', T, 100)).toBeLessThanOrEqual(pageRows);
      expect(accessAtRowsVisitedIn(reader, 'acct-big', T, 100, first.more)).toBeLessThanOrEqual(pageRows);
      // A cursor from before the instant pages from the instant.
      expect(accessAtRowsVisitedIn(reader, 'acct-big', T, 100, { lastExpiresAt: T - 100_000, grantId: 'acct-big-fam-5' })).toBeLessThanOrEqual(pageRows);
    } finally {
      reader.close();
    }
  });

  it('an instant before the account\'s first event answers an empty page without reading its grants', async () => {
    await account('acct-big');
    await families('acct-big', 50, { issuedAt: T - 3000 });
    const index = openIndex();
    await catchUpIndex(index, store);
    expect(index.accessAt('acct-big', 0, { limit: 100 })).toMatchObject({ families: [], legacyTokens: [], more: undefined });
  });
});

describe('the time budget', () => {
  it('stops an events query at its budget with AuditQueryOverBudget naming the budget, and the index answers the next query', async () => {
    await account('acct-big');
    await families('acct-big', 10_000, { issuedAt: T - 3000, perAppend: 1000 });
    await revocationsOfOthers(10_000);
    const index = openIndex();
    await catchUpIndex(index, store);
    // 10,000 rows of the account and 10,000 revocations, none of them both: whichever index the
    // planner picks, it visits 10,000 rows, against a budget of none.
    const scan = parseEventQuery({ account: 'acct-big', type: 'TokenRevoked' });
    let thrown: unknown;
    try {
      index.events(scan, 0);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AuditQueryOverBudget);
    expect((thrown as AuditQueryOverBudget).budgetMs).toBe(0);
    expect(String(thrown)).toMatch(/time budget of 0 ms \(TESSERA_AUDIT_QUERY_BUDGET_MS\)/);
    expect((thrown as AuditQueryOverBudget).code).toBe('ERR_AUDIT_QUERY_OVER_BUDGET');
    expect(index.events(scan, 60_000).rows).toEqual([]);
    expect(index.events(parseEventQuery({ account: 'acct-big', limit: '5' }), 60_000).rows).toHaveLength(5);
  });

  it('stops access-at at its budget too', async () => {
    await account('acct-big');
    await families('acct-big', 5000, { issuedAt: T - 3000, perAppend: 1000 });
    const index = openIndex();
    await catchUpIndex(index, store);
    expect(() => index.accessAt('acct-big', T, { limit: 1000 }, 0)).toThrow(AuditQueryOverBudget);
    expect(index.accessAt('acct-big', T, { limit: 1000 }, 60_000)!.families).toHaveLength(1000);
  });
});

describe('a live backlog', () => {
  it('is written in transactions of at most 1,000 events once the index holds rows, so a query waits for a short one at most', async () => {
    await account('acct-big');
    await families('acct-big', 10, { issuedAt: T - 3000 });
    const index = openIndex();
    await catchUpIndex(index, store);
    // A burst the follower finds waiting: 4,000 events.
    await families('acct-big', 4000, { issuedAt: T - 3000, first: 10, perAppend: 1000 });
    const batches: number[] = [];
    const apply = index.apply.bind(index);
    index.apply = (batch, appliedUpTo) => {
      batches.push(batch.length);
      return apply(batch, appliedUpTo);
    };
    const follower = followIntoIndex(store, index, { onError: (error) => expect.fail(String(error)) });
    await follower.caughtUp;
    await follower.close();
    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(4000);
    expect(Math.max(...batches)).toBeLessThanOrEqual(1000);
  });
});

describe('statistics', () => {
  it('an index grown live from empty is analysed again as it doubles, and access-at reads the account\'s grants index', async () => {
    const index = openIndex();
    const follower = followIntoIndex(store, index, { flushDelayMs: 5, onError: (error) => expect.fail(String(error)) });
    await follower.caughtUp;
    // A young log: one small account, then a large one arriving while the index follows.
    await account('acct-small');
    await families('acct-small', 3, { issuedAt: T - 3000 });
    await vi.waitFor(() => expect(index.position()).toBe(4n));
    await account('acct-big');
    await families('acct-big', 12_000, { issuedAt: T - 3000, perAppend: 500 });
    const head = await store.headPosition();
    await vi.waitFor(() => expect(index.position()).toBe(head), { timeout: 30_000 });
    await follower.close();

    const reader = new Database(file, { readonly: true });
    try {
      const stat = reader.prepare<[], string>("SELECT stat FROM sqlite_stat1 WHERE idx = 'grants_account'").pluck().get();
      // sqlite_stat1's first number is the row count it saw: at least half of today's 12,003 grants.
      expect(Number(stat?.split(' ')[0])).toBeGreaterThanOrEqual(6000);
      expect(accessAtPlanIn(reader).join('\n')).toMatch(/USING INDEX grants_account \(account_id=\? AND \(last_expires_at,grant_id\)>\(\?,\?\) AND last_expires_at<\?\)/);
    } finally {
      reader.close();
    }
    expect(index.accessAt('acct-small', T, { limit: 100 })!.families).toHaveLength(3);
  }, 60_000);
});
