import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TesseraEvent } from '@tessera/events';
import { eventStoreContract } from '@tessera/event-store/contract';
import { ExpectedRevisionConflict, type AppendResult } from '@tessera/event-store';
import { SqliteEventStore } from './sqlite-event-store.js';

eventStoreContract('SQLite on disk', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-es-'));
  const file = join(dir, 'events.db');
  const store = new SqliteEventStore({ file, pollIntervalMs: 20 });
  return {
    store,
    openAnother: async () => new SqliteEventStore({ file, pollIntervalMs: 20 }),
    teardown: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// Where EventStoreDB cannot tell and would store a second event under the same id, SQLite's
// unique index refuses it (docs/decisions/0007): this is SQLite's side of that one difference.
describe('SQLite: an event id already used for another event', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-es-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db') });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const registered = (accountId: string): TesseraEvent => ({ type: 'AccountRegistered', v: 1, accountId, name: 'n', permissions: [], at: 1 });

  it('is a conflict in another stream, and writes nothing there', async () => {
    const eventId = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    await store.append(`account-${a}`, [{ event: registered(a), eventId }], { expectedRevision: 'no_stream' });
    const error = await store.append(`account-${b}`, [{ event: registered(b), eventId }], { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExpectedRevisionConflict);
    expect((error as ExpectedRevisionConflict).actual).toBe('no_stream');
    expect(await store.readStream(`account-${b}`)).toEqual([]);
  });

  it('is a conflict at the end of its own stream, naming the current revision, and writes nothing', async () => {
    const eventId = randomUUID();
    const a = randomUUID();
    await store.append(`account-${a}`, [{ event: registered(a), eventId }], { expectedRevision: 'no_stream' });
    const again = [{ event: registered(a), eventId: randomUUID() }, { event: registered(a), eventId }];
    const error = await store.append(`account-${a}`, again, { expectedRevision: 0n }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExpectedRevisionConflict);
    expect((error as ExpectedRevisionConflict).actual).toBe(0n);
    expect(await store.readStream(`account-${a}`)).toHaveLength(1);
  });

  it('in one group commit, refuses only the appends that reuse an id: their rows are undone, the others are written', async () => {
    const taken = randomUUID();
    const owner = randomUUID();
    await store.append(`account-${owner}`, [{ event: registered(owner), eventId: taken }], { expectedRevision: 'no_stream' });
    const [first, twoRows, oneRow, last] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const commitsBefore = store.commitStats().commits;
    // Made in one tick, so the writer thread takes them in one batch: one transaction, one commit.
    const outcomes = await Promise.allSettled([
      store.append(`account-${first}`, [{ event: registered(first) }], { expectedRevision: 'no_stream' }),
      // Its first row goes in before the second one's id is refused: that row must be undone.
      store.append(`account-${twoRows}`, [{ event: registered(twoRows) }, { event: registered(twoRows), eventId: taken }], { expectedRevision: 'no_stream' }),
      store.append(`account-${oneRow}`, [{ event: registered(oneRow), eventId: taken }], { expectedRevision: 'no_stream' }),
      store.append(`account-${last}`, [{ event: registered(last) }], { expectedRevision: 'no_stream' }),
    ]);
    expect(store.commitStats().commits).toBe(commitsBefore + 1);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(ExpectedRevisionConflict);
    expect(await store.readStream(`account-${twoRows}`)).toEqual([]);
    expect(await store.readStream(`account-${oneRow}`)).toEqual([]);
    expect((await store.readStream(`account-${first}`)).map((e) => e.revision)).toEqual([0n]);
    expect((await store.readStream(`account-${last}`)).map((e) => e.revision)).toEqual([0n]);
    expect((await store.readStream(`account-${owner}`)).map((e) => e.eventId)).toEqual([taken]);
  });
});

describe('SQLite: a batch for an idle writer thread gathers over turns of the event loop', () => {
  const register = (store: SqliteEventStore) => {
    const a = randomUUID();
    const event: TesseraEvent = { type: 'AccountRegistered', v: 1, accountId: a, name: 'n', permissions: [], at: 1 };
    return store.append(`account-${a}`, [{ event }], { expectedRevision: 'no_stream' });
  };
  /** Makes one append now and one at each of the next `turns` turns of the event loop (setImmediate). */
  const oneAppendPerTurn = (store: SqliteEventStore, turns: number) =>
    new Promise<Promise<AppendResult>[]>((resolve) => {
      const made = [register(store)];
      const next = () => {
        made.push(register(store));
        if (made.length > turns) resolve(made);
        else setImmediate(next);
      };
      setImmediate(next);
    });

  it('takes an append made at the next turn into the same commit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-es-'));
    const store = new SqliteEventStore({ file: join(dir, 'events.db') });
    try {
      await Promise.all(await oneAppendPerTurn(store, 1));
      expect(store.commitStats()).toMatchObject({ commits: 1, appends: 2 });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sends the batch at its third turn even while every turn brings another append', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-es-'));
    const store = new SqliteEventStore({ file: join(dir, 'events.db') });
    try {
      const made = await oneAppendPerTurn(store, 5);
      await made[0];
      // The first batch went at turn three with the appends of turns 0-2; the rest gathered behind it.
      expect(store.commitStats()).toMatchObject({ commits: 1, appends: 3 });
      await Promise.all(made);
      expect(store.commitStats().appends).toBe(6);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite: the writer thread counts its group commits', () => {
  it('counts one commit for appends made in the same tick, and the time the commit and its round trip took', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-es-'));
    const store = new SqliteEventStore({ file: join(dir, 'events.db') });
    try {
      expect(store.commitStats()).toEqual({ commits: 0, appends: 0, commitSeconds: 0, roundTripSeconds: 0 });
      const accounts = Array.from({ length: 5 }, () => randomUUID());
      await Promise.all(
        accounts.map((a) => store.append(`account-${a}`, [{ event: { type: 'AccountRegistered', v: 1, accountId: a, name: 'n', permissions: [], at: 1 } }], { expectedRevision: 'no_stream' })),
      );
      const afterGroup = store.commitStats();
      expect(afterGroup).toMatchObject({ commits: 1, appends: 5 });
      expect(afterGroup.commitSeconds).toBeGreaterThan(0);
      // The round trip holds the commit: it cannot be shorter.
      expect(afterGroup.roundTripSeconds).toBeGreaterThanOrEqual(afterGroup.commitSeconds);
      // A conflict is still an append the commit carried.
      await store.append(`account-${accounts[0]}`, [{ event: { type: 'AccountRegistered', v: 1, accountId: accounts[0]!, name: 'n', permissions: [], at: 1 } }], { expectedRevision: 'no_stream' }).catch(() => undefined);
      expect(store.commitStats()).toMatchObject({ commits: 2, appends: 6 });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// better-sqlite3 builds SQLite with a 16 MB page cache per connection, and the writer's keeps every
// page it writes, so the process grew with the log. The writer thread is given the same size as the
// reader (workerData); only the reader's can be read back here.
describe("SQLite: the reader connection's page cache", () => {
  it("is SQLite's own default of about 2 MB, not better-sqlite3's 16 MB", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-es-'));
    const store = new SqliteEventStore({ file: join(dir, 'events.db') });
    try {
      // The connection is private: the test reads its setting back, which nothing public exposes.
      const reader = (store as unknown as { db: { pragma(source: string, options: { simple: true }): unknown } }).db;
      // Negative: KiB, as SQLite counts a cache given by size rather than by pages.
      expect(reader.pragma('cache_size', { simple: true })).toBe(-2048);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
