import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TesseraEvent } from '@tessera/events';
import { SqliteEventStore } from './sqlite-event-store.js';

/**
 * positionBefore(T) when the log's recording order and position order differ, as they do when
 * several processes share the file and their clocks (or one clock that stepped back) disagree.
 * The port alone cannot make that happen, so this drives the SQLite adapter's injected clock.
 */
const registered = (): TesseraEvent => ({ type: 'AccountRegistered', v: 1, accountId: randomUUID(), name: 'n', permissions: [], at: 1 });

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A store whose appends are recorded at these times, one append (one commit) each. */
async function logRecordedAt(times: number[]): Promise<SqliteEventStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-position-before-'));
  dirs.push(dir);
  const clock = [...times];
  const store = new SqliteEventStore({ file: join(dir, 'events.db'), clock: { now: () => clock.shift() ?? Number.NaN } });
  for (let i = 0; i < times.length; i += 1) await store.append(`account-${randomUUID()}`, [{ event: registered() }], { expectedRevision: 'no_stream' });
  return store;
}

describe('SQLite positionBefore with recording order unlike position order', () => {
  it('returns one before the smallest position recorded at or after the time, so reading after it misses none', async () => {
    // Positions 1, 2, 3 recorded at 1000, 3000, 2000.
    const store = await logRecordedAt([1_000, 3_000, 2_000]);
    try {
      const before = await store.positionBefore(2_000);
      expect(before).toBe(1n);
      const read = await store.readAll({ after: before });
      expect(read.map((e) => [e.position, e.recordedAt])).toEqual([
        [2n, 3_000],
        [3n, 2_000],
      ]);
    } finally {
      await store.close();
    }
  });

  it('returns undefined (read from the start) when the first position qualifies, and the head when none does', async () => {
    const store = await logRecordedAt([5_000, 1_000, 2_000]);
    try {
      expect(await store.positionBefore(1_500)).toBeUndefined();
      expect(await store.positionBefore(9_000)).toBe(3n);
    } finally {
      await store.close();
    }
  });
});
