import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '@tessera/timing';
import { SqliteEventStore } from './sqlite-event-store.js';
import { revocations, writeBulkLog } from './testing/bulk-log.js';

/**
 * A read model catching up with a long log shares the thread with the requests: a catch-up of
 * any length must cost them at most a slice (5 ms of delivering), never the whole catch-up. The
 * mechanism is what is checked here: the subscription gives the event loop a turn after every
 * slice. How long a slice takes on a given machine is the benchmark's to measure.
 */
const events = 20_000;
/** Each delivery costs the slice 1 ms of the clock the slices read, so a 5 ms slice is 5 events. */
const eventsPerSlice = 5;
let dir: string;
let store: SqliteEventStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tessera-slices-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a subscription catching up with a long log', () => {
  it(`delivers every event and gives the event loop a turn after every slice: never more than ${eventsPerSlice} events between two turns`, async () => {
    const file = join(dir, 'events.db');
    writeBulkLog(file, revocations(events, systemClock.now()));
    store = new SqliteEventStore({ file });
    // The slices' clock moves only as events are delivered: the same slices on a fast machine and a busy one.
    let sliceClockMs = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => sliceClockMs);
    let delivered = 0;
    // A sentinel on the event loop, queued again each turn: the events delivered between two of its runs
    // are what a request arriving then would have waited behind.
    let longestRun = 0;
    let deliveredAtLastTurn = 0;
    let turns = 0;
    let ticking = true;
    const tick = () => {
      longestRun = Math.max(longestRun, delivered - deliveredAtLastTurn);
      deliveredAtLastTurn = delivered;
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const subscription = store.subscribeToAll({
      onEvent: () => {
        delivered += 1;
        sliceClockMs += 1;
      },
    });
    await subscription.caughtUp;
    ticking = false;
    tick();
    await subscription.close();
    expect(delivered).toBe(events);
    expect(longestRun).toBeLessThanOrEqual(eventsPerSlice);
    expect(turns).toBeGreaterThanOrEqual(events / eventsPerSlice);
  });
});
