import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RecordedEvent, TesseraEvent } from '@tessera/events';
import { SqliteEventStore } from './sqlite-event-store.js';

const permissionsChanged = (accountId: string): TesseraEvent => ({ type: 'PermissionsChanged', v: 1, accountId, permissions: ['p'], at: 2 });

/**
 * A commit of this process wakes its subscriptions; a commit answered while a subscription is
 * still delivering the previous one must not be lost. The poll interval is an hour here, so only
 * the wake can deliver the second event: a subscription that dropped it would deliver nothing more.
 */
describe('SQLite: a commit answered while a subscription delivers is delivered without a poll', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-wakeups-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 3_600_000 });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([['filtered (the live tail)', ['PermissionsChanged'] as const], ['unfiltered (by page)', undefined]])('%s', async (_, types) => {
    const received: RecordedEvent[] = [];
    let firstArrived!: () => void;
    const firstDelivery = new Promise<void>((resolve) => (firstArrived = resolve));
    let releaseFirst!: () => void;
    const firstHandled = new Promise<void>((resolve) => (releaseFirst = resolve));
    const subscription = store.subscribeToAll({
      after: await store.headPosition(),
      ...(types ? { types } : {}),
      // The reader is still busy with the first event (as the relay is while it buffers it) when the second is committed.
      onEvent: async (recorded) => {
        received.push(recorded);
        if (received.length === 1) {
          firstArrived();
          await firstHandled;
        }
      },
    });
    await subscription.caughtUp;

    const first = randomUUID();
    await store.append(`account-${first}`, [{ event: permissionsChanged(first) }], { expectedRevision: 'no_stream' });
    await firstDelivery;
    const second = randomUUID();
    const committed = await store.append(`account-${second}`, [{ event: permissionsChanged(second) }], { expectedRevision: 'no_stream' });
    releaseFirst();

    await vi.waitFor(() => expect(received.map((recorded) => recorded.position)).toContain(committed.position), { timeout: 5_000 });
    expect(received.map((recorded) => recorded.stream)).toEqual([`account-${first}`, `account-${second}`]);
    await subscription.close();
  });
});
