import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '@tessera/timing';
import { SqliteEventStore } from './sqlite-event-store.js';
import { blockedLoopProbe } from '../../../test/support/blocked-loop-probe.js';
import { revocations, writeBulkLog } from './testing/bulk-log.js';

/**
 * A read model catching up with a long log shares the thread with the requests: a catch-up of
 * any length must cost them at most a slice, never the whole catch-up. A blocked-loop probe (the
 * timer that notes the longest gap between its ticks) runs beside a catch-up of 200,000 events.
 */
let dir: string;
let store: SqliteEventStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tessera-slices-'));
});
afterEach(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a subscription catching up with a long log', () => {
  it('delivers all 200,000 events while the event loop is never held for 250 ms or more', async () => {
    const file = join(dir, 'events.db');
    writeBulkLog(file, revocations(200_000, systemClock.now()));
    store = new SqliteEventStore({ file });
    const probe = blockedLoopProbe();
    let delivered = 0;
    const subscription = store.subscribeToAll({ onEvent: () => void (delivered += 1) });
    await subscription.caughtUp;
    const longestGapMs = probe.stop();
    await subscription.close();
    expect(delivered).toBe(200_000);
    // A request arriving during the catch-up would have waited as long as the longest gap.
    expect(longestGapMs).toBeLessThan(250);
  });
});

