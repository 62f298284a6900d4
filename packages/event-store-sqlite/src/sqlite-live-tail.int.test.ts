import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedEvent, TesseraEvent } from '@tessera/events';
import { SqliteEventStore } from './sqlite-event-store.js';

const registered = (accountId: string): TesseraEvent => ({ type: 'AccountRegistered', v: 1, accountId, name: 'n', permissions: [], at: 1 });
const permissionsChanged = (accountId: string, n: number): TesseraEvent => ({ type: 'PermissionsChanged', v: 1, accountId, permissions: [`p${n}`], at: 2 });

/**
 * A caught-up subscription with a type filter reads the log's tail in one scan and moves its
 * read position past events of other types: what it delivers, and lastPosition(),
 * must be what reading by type gave.
 */
describe('SQLite: a caught-up filtered subscription reads the tail in one scan', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-tail-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const follow = async (types: RecordedEvent['event']['type'][]) => {
    const received: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: await store.headPosition(), types, onEvent: (recorded) => void received.push(recorded) });
    await subscription.caughtUp;
    return { received, subscription };
  };

  it('delivers only its types, in log order, across commits that mix types; lastPosition() is the last delivered event', async () => {
    const { received, subscription } = await follow(['PermissionsChanged']);
    const account = randomUUID();
    await store.append(`account-${account}`, [{ event: registered(account) }, { event: permissionsChanged(account, 1) }], { expectedRevision: 'no_stream' });
    const other = randomUUID();
    await store.append(`account-${other}`, [{ event: registered(other) }], { expectedRevision: 'no_stream' });
    await store.append(`account-${account}`, [{ event: permissionsChanged(account, 2) }], { expectedRevision: 1n });
    const last = randomUUID();
    await store.append(`account-${last}`, [{ event: registered(last) }], { expectedRevision: 'no_stream' });
    await expect.poll(() => received.length, { timeout: 5000 }).toBe(2);
    const stream = await store.readStream(`account-${account}`);
    expect(received.map((r) => [r.position, r.event])).toEqual([
      [stream[1]!.position, permissionsChanged(account, 1)],
      [stream[2]!.position, permissionsChanged(account, 2)],
    ]);
    // The registration after it was read past, but lastPosition() names what was handled.
    expect(subscription.lastPosition()).toBe(stream[2]!.position);
    await subscription.close();
  });

  it('falls back to reading by type when the tail is longer than one scan, and misses nothing', async () => {
    const { received, subscription } = await follow(['PermissionsChanged']);
    const account = randomUUID();
    const burst = Array.from({ length: 600 }, (_, n) => (n % 200 === 199 ? { event: permissionsChanged(account, n) } : { event: registered(randomUUID()) }));
    await store.append(`account-${account}`, burst, { expectedRevision: 'no_stream' });
    await expect.poll(() => received.length, { timeout: 5000 }).toBe(3);
    expect(received.map((r) => (r.event as { permissions: string[] }).permissions[0])).toEqual(['p199', 'p399', 'p599']);
    await subscription.close();
  });

  it('still finds what another process wrote between its own commits', async () => {
    const { received, subscription } = await follow(['PermissionsChanged']);
    const elsewhere = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    try {
      const here = randomUUID();
      const there = randomUUID();
      await store.append(`account-${here}`, [{ event: registered(here) }], { expectedRevision: 'no_stream' });
      await elsewhere.append(`account-${there}`, [{ event: registered(there) }, { event: permissionsChanged(there, 1) }], { expectedRevision: 'no_stream' });
      await store.append(`account-${here}`, [{ event: permissionsChanged(here, 2) }], { expectedRevision: 0n });
      await expect.poll(() => received.map((r) => r.stream), { timeout: 5000 }).toEqual([`account-${there}`, `account-${here}`]);
    } finally {
      await elsewhere.close();
      await subscription.close();
    }
  });
});
