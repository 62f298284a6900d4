import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { streams, type TesseraEvent } from '@tessera/events';
import { InMemoryEventStore, type NewEvent, type SubscribeOptions } from '@tessera/event-store';
import { locksHeldOn } from '@tessera/event-store-sqlite/testing/process-locks';
import { AuditIndex } from './audit-index.js';
import { catchUpIndex } from './catch-up.js';
import { encodeCursor, parseEventQuery, type RawParameters } from './event-query.js';
import { followIntoIndex } from './index-follower.js';
import { pageCacheKiB } from './testing/index-diagnostics.js';

/** The audit index in a real file: what it keeps, how it filters, and how it survives restarts and damage. */
const hash = (n: number) => `${String(n)}`.padStart(43, 'H');
let folder: string;
let file: string;
let clock: number;
let store: InMemoryEventStore;
const open: AuditIndex[] = [];
const openIndex = () => {
  const index = AuditIndex.open(file);
  open.push(index);
  return index;
};
const query = (raw: RawParameters) => parseEventQuery(raw);

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'tessera-audit-index-'));
  file = join(folder, 'audit-index.db');
  clock = Date.parse('2026-11-22T14:00:00Z');
  store = new InMemoryEventStore({ clock: { now: () => clock } });
});
afterEach(async () => {
  for (const index of open.splice(0)) index.close();
  await store.close();
  rmSync(folder, { recursive: true, force: true });
});

const at = () => Math.floor(clock / 1000);
async function append(stream: string, event: TesseraEvent, metadata: NewEvent['metadata'] = {}) {
  await store.append(stream, [{ event, metadata }], { expectedRevision: 'any' });
  clock += 1000;
}
/** An account with a v5 login and a v1 key, one family refreshed once then revoked, and one v1 token. */
async function history(accountId: string, familyId: string) {
  const login = `tsl_${accountId}`;
  await append(streams.account(accountId), { type: 'AccountRegistered', v: 1, accountId, name: accountId, permissions: ['transaction:charge'], at: at() }, { actor: 'cli' });
  await append(streams.account(accountId), { type: 'ApiCredentialIssued', v: 1, accountId, credentialId: `c5_${accountId}`, apiLoginId: login, transactionKeyHash: hash(1), at: at() });
  await append(streams.account(accountId), { type: 'LegacyCredentialIssued', v: 1, accountId, credentialId: `c1_${accountId}`, apiId: `tla_${accountId}`, apiKeyHash: hash(2), at: at() });
  const family = { familyId, accountId, credentialId: `c5_${accountId}`, apiLoginId: login, jti: 'j', scope: ['transaction:charge'], refreshExpiresAt: at() + 86_400 };
  await append(streams.family(familyId), { type: 'TokenIssued', v: 1, ...family, generation: 0, refreshTokenHash: hash(3), issuedAt: at(), accessExpiresAt: at() + 3600 }, { requestId: 'req-issue', sourceAddress: '10.0.0.1' });
  await append(streams.family(familyId), { type: 'TokenRotated', v: 1, ...family, generation: 1, refreshTokenHash: hash(4), issuedAt: at(), accessExpiresAt: at() + 3600 }, { requestId: 'req-refresh', sourceAddress: '10.0.0.2' });
  await append(streams.family(familyId), { type: 'TokenRevoked', v: 1, familyId, accountId, generation: 1, revokedAt: at(), accessExpiresAt: at() + 3599, reason: 'refresh-token-reused' }, { requestId: 'req-revoke', sourceAddress: '10.0.0.3' });
  await append(streams.legacyTokens(accountId), { type: 'LegacyTokenIssued', v: 1, accountId, credentialId: `c1_${accountId}`, apiId: `tla_${accountId}`, jti: `lj_${accountId}`, issuedAt: at(), expiresAt: at() + 1800 });
}

describe('rows and filters', () => {
  beforeEach(async () => {
    await history('acct_a', 'fam_a');
    await history('acct_b', 'fam_b');
    await append(streams.signingKeys(), { type: 'SigningKeyPublished', v: 1, kid: 'k1', alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, at: at() }, { actor: 'issuer-1' });
  });

  it('keeps ids, times, request ids and addresses of every event, and no hash', async () => {
    const index = openIndex();
    await catchUpIndex(index, store);
    const { rows, logPosition } = index.events(query({ limit: '1000' }));
    expect(rows).toHaveLength(15);
    expect(logPosition).toBe(15n);
    expect(rows[4]).toEqual({
      position: '5',
      type: 'TokenRotated',
      time: '2026-11-22T14:00:04.000Z',
      account_id: 'acct_a',
      family_id: 'fam_a',
      generation: 1,
      reason: null,
      request_id: 'req-refresh',
      source_address: '10.0.0.2',
      actor: null,
    });
    expect(rows[5]).toMatchObject({ type: 'TokenRevoked', reason: 'refresh-token-reused', generation: 1 });
    expect(rows[14]).toMatchObject({ type: 'SigningKeyPublished', account_id: null, actor: 'issuer-1' });
    expect(JSON.stringify(rows)).not.toMatch(/HHHH/);
  });

  it.each([
    [{ account: 'acct_b' }, [8, 9, 10, 11, 12, 13, 14]],
    [{ family: 'fam_a' }, [4, 5, 6]],
    // The revocation names no login: it is the login's through its family.
    [{ api_login_id: 'tsl_acct_a' }, [2, 4, 5, 6]],
    [{ api_id: 'tla_acct_b' }, [10, 14]],
    [{ type: ['TokenRevoked', 'LegacyTokenIssued'] }, [6, 7, 13, 14]],
    [{ account: 'acct_a', type: 'TokenIssued' }, [4]],
    [{ since: '2026-11-22T14:00:05Z', until: '2026-11-22T14:00:08Z' }, [6, 7, 8]],
    [{ since: '2026-11-22T14:00:05.001Z' }, [7, 8, 9, 10, 11, 12, 13, 14, 15]],
    [{ until: '2026-11-22T14:00:00.001Z' }, [1]],
    [{ since: '2026-11-23' }, []],
  ])('%j selects positions %j, in log order', async (raw, positions) => {
    const index = openIndex();
    await catchUpIndex(index, store);
    expect(index.events(query(raw as RawParameters)).rows.map((row) => Number(row.position))).toEqual(positions);
  });

  it('pages of `limit` rows, each cursor continuing after the page before, together are every matching row once', async () => {
    const index = openIndex();
    await catchUpIndex(index, store);
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = index.events(query({ account: 'acct_a', limit: '3', ...(cursor === undefined ? {} : { cursor }) }));
      seen.push(...page.rows.map((row) => Number(row.position)));
      cursor = page.more === undefined ? undefined : encodeCursor(page.more);
      pages += 1;
    } while (cursor !== undefined);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(pages).toBe(3);
  });

  it('a row\'s time never goes back along the log, so since/until select one stretch of it', async () => {
    const index = openIndex();
    const log = await store.readAll();
    // A process whose clock lags a minute records after the others (processes sharing one SQLite file can).
    const lagging = { ...log[14]!, position: 16n, eventId: 'late', recordedAt: log[14]!.recordedAt - 60_000 };
    index.apply([...log, lagging], undefined);
    expect(index.events(query({ type: 'SigningKeyPublished' })).rows.map((row) => [row.position, row.time])).toEqual([
      ['15', '2026-11-22T14:00:14.000Z'],
      ['16', '2026-11-22T14:00:14.000Z'],
    ]);
    expect(index.events(query({ since: '2026-11-22T14:00:14Z' })).rows.map((row) => row.position)).toEqual(['15', '16']);
  });
});

describe('the file', () => {
  it('is made readable by its owner only, WAL included', async () => {
    await history('acct_a', 'fam_a');
    const index = openIndex();
    await catchUpIndex(index, store);
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect((statSync(`${file}-wal`).mode & 0o777).toString(8)).toBe('600');
  });

  it.runIf(process.platform === 'linux')("keeps the first connection's locks when the file is opened again in the process, so another program never deletes its WAL", async () => {
    await history('acct_a', 'fam_a');
    const index = openIndex();
    await catchUpIndex(index, store);
    index.position();
    const before = locksHeldOn(file);
    expect(before).toBeGreaterThan(0);
    openIndex().position();
    expect(locksHeldOn(file)).toBeGreaterThanOrEqual(before);
  });

  it('remembers the position it reflects: reopened, it continues from there and reads nothing twice', async () => {
    await history('acct_a', 'fam_a');
    const first = openIndex();
    await catchUpIndex(first, store);
    first.close();
    await history('acct_b', 'fam_b');
    const reopened = openIndex();
    expect(reopened.rebuilt).toBe(false);
    expect(reopened.position()).toBe(7n);
    const subscribe = vi.spyOn(store, 'subscribeToAll');
    const follower = followIntoIndex(store, reopened, { onError: (error) => expect.fail(String(error)) });
    await follower.caughtUp;
    await follower.close();
    expect(subscribe.mock.calls[0]?.[0].after).toBe(7n);
    expect(reopened.events(query({ limit: '1000' })).rows.map((row) => Number(row.position))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  it.each([
    ['missing', () => rmSync(file), false],
    ['not a database', () => writeFileSync(file, 'this is not an SQLite file, but it is long enough to have a header'.repeat(100)), true],
  ])('a %s file is made again and filled from the log', async (_what, damage, replaced) => {
    await history('acct_a', 'fam_a');
    const first = openIndex();
    await catchUpIndex(first, store);
    first.close();
    damage();
    const again = openIndex();
    expect(again.rebuilt).toBe(replaced);
    expect(again.position()).toBeUndefined();
    await catchUpIndex(again, store);
    expect(again.events(query({ account: 'acct_a' })).rows).toHaveLength(7);
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
  });

  it('an index built from another log is emptied and built again from this one', async () => {
    await history('acct_a', 'fam_a');
    const index = openIndex();
    await catchUpIndex(index, store);
    const other = new InMemoryEventStore({ clock: { now: () => clock } });
    try {
      await other.append(streams.account('acct_z'), [{ event: { type: 'AccountRegistered', v: 1, accountId: 'acct_z', name: 'z', permissions: [], at: at() } }], { expectedRevision: 'no_stream' });
      await catchUpIndex(index, other);
      expect(index.events(query({})).rows.map((row) => row.account_id)).toEqual(['acct_z']);
    } finally {
      await other.close();
    }
  });

  it('an index of a log restored from an older backup, which then grew again, is emptied and built again', async () => {
    await history('acct_a', 'fam_a');
    const index = openIndex();
    await catchUpIndex(index, store);
    const restored = new InMemoryEventStore({ clock: { now: () => clock } });
    try {
      // The backup held the first five events; the log then took other ones at positions 6, 7, 8.
      for (const { stream, event, eventId, metadata } of (await store.readAll()).slice(0, 5)) {
        await restored.append(stream, [{ event, eventId, metadata }], { expectedRevision: 'any' });
      }
      for (const accountId of ['acct_x', 'acct_y', 'acct_z']) {
        await restored.append(streams.account(accountId), [{ event: { type: 'AccountRegistered', v: 1, accountId, name: accountId, permissions: [], at: at() } }], { expectedRevision: 'no_stream' });
      }
      expect(await index.forgetIfAnotherLog(store)).toBe(false);
      await catchUpIndex(index, restored);
      expect(index.events(query({ limit: '1000' })).rows.map((row) => row.account_id)).toEqual(['acct_a', 'acct_a', 'acct_a', 'acct_a', 'acct_a', 'acct_x', 'acct_y', 'acct_z']);
    } finally {
      await restored.close();
    }
  });

  it('is kept when the event at its position was archived, as an idle log\'s newest events are: its position never goes back', async () => {
    await history('acct_a', 'fam_a');
    const index = openIndex();
    await catchUpIndex(index, store);
    const position = index.position()!;
    // The same log with its newest events (the family's and the v1 token's) archived: the log handed those positions out, and holds none of them now.
    const archived = new Set([position, position - 1n, position - 2n, position - 3n]);
    const afterArchiving = {
      readAll: async (options: Parameters<InMemoryEventStore['readAll']>[0]) => (await store.readAll(options)).filter((recorded) => !archived.has(recorded.position)),
      headPosition: () => store.headPosition(),
    };
    expect(await index.forgetIfAnotherLog(afterArchiving)).toBe(false);
    expect(index.position()).toBe(position);
    expect(index.events(query({ account: 'acct_a' })).rows).toHaveLength(7);
  });

  it('two processes feeding one file write each event once', async () => {
    await history('acct_a', 'fam_a');
    const server = openIndex();
    const cli = openIndex();
    const batch = await store.readAll();
    expect(server.apply(batch.slice(0, 5), undefined)).toEqual({ position: 5n, gap: false });
    // The other process read the same events before it saw the first one's commit.
    expect(cli.apply(batch, undefined)).toEqual({ position: 7n, gap: false });
    expect(server.apply(batch.slice(5), 5n)).toEqual({ position: 7n, gap: false });
    expect(server.events(query({})).rows.map((row) => Number(row.position))).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('a batch that does not follow what the index reflects (emptied meanwhile) is refused as a gap', async () => {
    await history('acct_a', 'fam_a');
    const index = openIndex();
    const batch = await store.readAll();
    expect(index.apply(batch.slice(3), 3n)).toEqual({ position: undefined, gap: true });
    expect(index.events(query({})).rows).toEqual([]);
  });
});

describe('bulk load', () => {
  it('an index filled in one bulk load answers as one filled event by event', async () => {
    await history('acct_a', 'fam_a');
    await history('acct_b', 'fam_b');
    const bulk = openIndex();
    await catchUpIndex(bulk, store);
    const byEvent = AuditIndex.open(':memory:');
    open.push(byEvent);
    let from: bigint | undefined;
    for (const recorded of await store.readAll()) {
      byEvent.apply([recorded], from);
      from = recorded.position;
    }
    expect(bulk.events(query({ limit: '1000' }))).toEqual(byEvent.events(query({ limit: '1000' })));
    expect(bulk.events(query({ api_login_id: 'tsl_acct_b' })).rows).toHaveLength(4);
    const start = Math.floor(Date.parse('2026-11-22T14:00:00Z') / 1000);
    for (let at = start; at < start + 4000; at += 1) expect(bulk.accessAt('acct_b', at)).toEqual(byEvent.accessAt('acct_b', at));
  });

  it('a bulk load that does not finish leaves the index empty, and the next one fills it', async () => {
    await history('acct_a', 'fam_a');
    const index = openIndex();
    expect(index.startBulkLoad()).toBe(true);
    index.apply(await store.readAll(), undefined);
    expect(index.position()).toBe(7n);
    index.close();
    const reopened = openIndex();
    expect(reopened.position()).toBeUndefined();
    await catchUpIndex(reopened, store);
    expect(reopened.position()).toBe(7n);
    expect(reopened.startBulkLoad()).toBe(false);
  });

  // The connection's cache is memory the process keeps for good: it stays small while the index
  // follows the log, and a bulk load's larger one does not outlive it.
  it('keeps a 4 MB page cache, larger only while a bulk load builds the indexes', async () => {
    await history('acct_a', 'fam_a');
    const index = openIndex();
    const cacheKiB = () => pageCacheKiB(index);
    expect(cacheKiB()).toBe(4096);
    expect(index.startBulkLoad()).toBe(true);
    expect(cacheKiB()).toBe(128 * 1024);
    index.apply(await store.readAll(), undefined);
    index.finishBulkLoad();
    expect(cacheKiB()).toBe(4096);
  });
});

describe('following the log', () => {
  it('catches up in batches, then writes new events within the flush delay', async () => {
    await history('acct_a', 'fam_a');
    const index = AuditIndex.open(':memory:');
    try {
      const follower = followIntoIndex(store, index, { batchSize: 3, flushDelayMs: 10, onError: (error) => expect.fail(String(error)) });
      await follower.caughtUp;
      expect(index.position()).toBe(7n);
      await history('acct_b', 'fam_b');
      await vi.waitFor(() => expect(index.position()).toBe(14n));
      await follower.close();
    } finally {
      index.close();
    }
  });

  it('on close, what was delivered but not yet written is written', async () => {
    await history('acct_a', 'fam_a');
    const index = AuditIndex.open(':memory:');
    try {
      let delivered: bigint | undefined;
      const watched = { subscribeToAll: (options: SubscribeOptions) => store.subscribeToAll({ ...options, onEvent: (recorded) => (options.onEvent(recorded), void (delivered = recorded.position)) }) };
      const follower = followIntoIndex(watched, index, { flushDelayMs: 60_000, onError: (error) => expect.fail(String(error)) });
      await follower.caughtUp;
      await append(streams.account('acct_a'), { type: 'PermissionsChanged', v: 1, accountId: 'acct_a', permissions: [], at: at() });
      await vi.waitFor(() => expect(delivered).toBe(8n));
      expect(index.position()).toBe(7n);
      await follower.close();
      expect(index.position()).toBe(8n);
    } finally {
      index.close();
    }
  });
});
