import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedEvent, TesseraEvent } from '@tessera/events';
import { EventStoreUnavailable, type EventStore, type SubscribeOptions, type Subscription } from '@tessera/event-store';
import { SqliteEventStore } from './sqlite-event-store.js';
import { guardAvailability, type Availability } from '@tessera/event-store';
import { ManualClock, ManualScheduler } from '@tessera/timing';

/**
 * The guard over a real SQLite store, with the connection between them cut and restored by a
 * switch: what a dropped EventStoreDB connection or a store that went away looks like to the
 * guard, which is adapter-independent.
 */
function withCable(store: EventStore) {
  let cut = false;
  let probes = 0;
  const live = new Set<{ fail: () => void }>();
  const unavailable = () => new EventStoreUnavailable('the cable is cut');
  const through = <T>(call: () => Promise<T>) => (cut ? Promise.reject(unavailable()) : call());
  const cabled: EventStore = {
    append: (stream, events, options) => through(() => store.append(stream, events, options)),
    readStream: (stream, options) => through(() => store.readStream(stream, options)),
    readAll: (options) => through(() => store.readAll(options)),
    headPosition: () => through(() => store.headPosition()),
    positionBefore: (epochMs) => through(() => store.positionBefore(epochMs)),
    probe: () => {
      probes += 1;
      return through(() => store.probe());
    },
    close: () => store.close(),
    subscribeToAll: (options: SubscribeOptions): Subscription => {
      let failed = false;
      const inner = store.subscribeToAll({ ...options, onEvent: (recorded) => (failed ? undefined : options.onEvent(recorded)) });
      const handle = {
        fail: () => {
          failed = true;
          live.delete(handle);
          void inner.close().then(() => options.onError?.(unavailable()));
        },
      };
      if (cut) queueMicrotask(handle.fail);
      else live.add(handle);
      return { caughtUp: inner.caughtUp, lastPosition: inner.lastPosition, close: inner.close };
    },
  };
  return {
    store: cabled,
    cut: () => {
      cut = true;
      for (const subscription of [...live]) subscription.fail();
    },
    restore: () => {
      cut = false;
    },
    /** How many times the guard probed the store through the cable. */
    probes: () => probes,
  };
}

const registered = (accountId: string): TesseraEvent => ({ type: 'AccountRegistered', v: 1, accountId, name: 'guard', permissions: [], at: 1_700_000_000 });

describe('guardAvailability over SQLite on disk', () => {
  let dir: string;
  let sqlite: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-guard-'));
    sqlite = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 10 });
  });
  afterEach(async () => {
    await sqlite.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('marks the store unavailable with its cause, fails appends fast, and probes its way back', async () => {
    const cable = withCable(sqlite);
    const changes: Availability[] = [];
    const guarded = guardAvailability(cable.store, { minBackoffMs: 20, maxBackoffMs: 40, onChange: (a) => changes.push(a) });
    await guarded.append('account-a', [{ event: registered('a') }], { expectedRevision: 'no_stream' });
    expect(guarded.availability()).toEqual({ available: true });

    cable.cut();
    await expect(guarded.append('account-b', [{ event: registered('b') }], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(EventStoreUnavailable);
    const down = guarded.availability();
    expect(down.available).toBe(false);
    expect(!down.available && down.cause).toMatch(/cable is cut/);
    // While down, an append is refused without reaching the store.
    cable.restore();
    const whileDown = guarded.append('account-c', [{ event: registered('c') }], { expectedRevision: 'no_stream' });
    await expect(whileDown).rejects.toThrow(/unavailable/);

    await guarded.whenAvailable();
    expect(guarded.availability()).toEqual({ available: true });
    await guarded.append('account-c', [{ event: registered('c') }], { expectedRevision: 'no_stream' });
    expect((await sqlite.readStream('account-c')).length).toBe(1);
    expect(changes.map((change) => change.available)).toEqual([false, true]);
  });

  it('probes on its scheduler after each backoff, not before, and is available again after the first probe that answers', async () => {
    const cable = withCable(sqlite);
    const scheduler = new ManualScheduler(new ManualClock(0));
    const guarded = guardAvailability(cable.store, { minBackoffMs: 100, maxBackoffMs: 1_000, clock: scheduler.clock, scheduler });
    cable.cut();
    await expect(guarded.append('account-b', [{ event: registered('b') }], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(EventStoreUnavailable);
    await scheduler.advance(99);
    expect(cable.probes()).toBe(0);
    await scheduler.advance(1);
    expect(cable.probes()).toBe(1);
    // That probe failed (the cable is still cut): the next waits twice as long.
    await expect.poll(() => scheduler.pending).toBe(1);
    await scheduler.advance(199);
    expect(cable.probes()).toBe(1);
    cable.restore();
    await scheduler.advance(1);
    expect(cable.probes()).toBe(2);
    await guarded.whenAvailable();
    expect(guarded.availability()).toEqual({ available: true });
    expect(scheduler.pending).toBe(0);
  });

  it('reopens a dropped subscription from its last position: nothing lost, nothing delivered twice', async () => {
    const cable = withCable(sqlite);
    const guarded = guardAvailability(cable.store, { minBackoffMs: 20, maxBackoffMs: 40 });
    for (let i = 0; i < 5; i += 1) await sqlite.append(`account-before-${i}`, [{ event: registered(`before-${i}`) }], { expectedRevision: 'no_stream' });
    const seen: RecordedEvent[] = [];
    const subscription = guarded.subscribeToAll({ onEvent: (recorded) => void seen.push(recorded), onError: (error) => expect.fail(String(error)) });
    await subscription.caughtUp;
    expect(subscription.live()).toBe(true);

    cable.cut();
    await expect.poll(() => subscription.live()).toBe(false);
    // Written while this reader's connection is down: it must get them after the reconnection.
    for (let i = 0; i < 5; i += 1) await sqlite.append(`account-during-${i}`, [{ event: registered(`during-${i}`) }], { expectedRevision: 'no_stream' });
    cable.restore();
    await expect.poll(() => subscription.live() && seen.length === 10).toBe(true);
    await sqlite.append('account-after', [{ event: registered('after') }], { expectedRevision: 'no_stream' });
    await expect.poll(() => seen.length).toBe(11);

    const positions = seen.map((recorded) => recorded.position);
    expect(new Set(positions).size).toBe(11);
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
    expect(subscription.lastPosition()).toBe(positions[10]);
    await subscription.close();
  });

  it('does not retry a subscriber that throws: its error reaches onError once', async () => {
    const guarded = guardAvailability(sqlite, { minBackoffMs: 20 });
    await sqlite.append('account-x', [{ event: registered('x') }], { expectedRevision: 'no_stream' });
    const errors: unknown[] = [];
    const bug = new Error('a read model bug');
    const subscription = guarded.subscribeToAll({
      onEvent: () => {
        throw bug;
      },
      onError: (error) => errors.push(error),
    });
    await expect.poll(() => errors.length).toBeGreaterThan(0);
    // The decision not to retry is taken as the error is reported: a retry would have been scheduled
    // then, and scheduling one marks the store unavailable at once (availability below).
    expect(errors).toEqual([bug]);
    expect(subscription.live()).toBe(false);
    expect(guarded.availability()).toEqual({ available: true });
    await subscription.close();
  });
});
