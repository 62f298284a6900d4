import { ManualClock, ManualScheduler } from '@tessera/timing';
import { describe, expect, it } from 'vitest';
import type { LeaseRecord } from './delivery-lease.js';
import { LogCheckpoints, type DeliverySnapshot } from './log-checkpoints.js';

/** The holder's checkpoint records over a manual scheduler: what is appended, and when. */
function setUp() {
  const scheduler = new ManualScheduler(new ManualClock(0));
  const appended: { atMs: number; record: LeaseRecord }[] = [];
  let snapshot: DeliverySnapshot = { upTo: 10n, positions: new Map() };
  const checkpoints = new LogCheckpoints(
    { upTo: 10n, positions: new Map() },
    {
      append: async (record) => void appended.push({ atMs: scheduler.clock.now(), record }),
      snapshot: () => snapshot,
      scheduler,
      monotonic: scheduler.clock,
      now: () => 1,
      refreshEveryMs: 600_000,
      onError: (error) => {
        throw error;
      },
    },
  );
  return { scheduler, appended, checkpoints, setSnapshot: (next: DeliverySnapshot) => (snapshot = next) };
}

describe("the lease holder's checkpoints in the log", () => {
  it('records a delivery at once, then at most once a second however many follow', async () => {
    const t = setUp();
    t.checkpoints.start();
    t.checkpoints.deliveredOne();
    await t.scheduler.runDue();
    expect(t.appended.map(({ atMs }) => atMs)).toEqual([0]);
    for (let index = 0; index < 5; index += 1) {
      await t.scheduler.advance(100);
      t.checkpoints.deliveredOne();
    }
    await t.scheduler.advance(500);
    expect(t.appended.map(({ atMs }) => atMs)).toEqual([0, 1_000]);
  });

  it('records nothing while idle but once every refresh, and a stream moving away from upTo at once', async () => {
    const t = setUp();
    // A holding starts with a record of where it starts.
    await t.checkpoints.flush();
    t.checkpoints.start();
    await t.scheduler.advance(599_000);
    expect(t.appended).toHaveLength(1);
    await t.scheduler.advance(1_000);
    expect(t.appended).toHaveLength(2);
    t.setSnapshot({ upTo: 12n, positions: new Map([['held', 11n]]) });
    await t.scheduler.advance(1_000);
    expect(t.appended.at(-1)!.record).toEqual({ type: 'SsfDeliveryCheckpointed', upTo: '12', positions: { held: '11' }, at: 1 });
  });

  it('reads a stream absent from the record at upTo, and one named at its own position', () => {
    const scheduler = new ManualScheduler(new ManualClock(0));
    const unused = { append: async () => undefined, snapshot: () => ({ upTo: undefined, positions: new Map<string, bigint>() }), scheduler, monotonic: scheduler.clock, now: () => 1, refreshEveryMs: 1, onError: () => undefined };
    const checkpoints = new LogCheckpoints({ upTo: 40n, positions: new Map([['held', 7n]]) }, unused);
    expect(checkpoints.get('live')).toBe(40n);
    expect(checkpoints.get('held')).toBe(7n);
  });
});

