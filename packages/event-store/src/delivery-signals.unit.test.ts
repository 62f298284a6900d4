import { afterEach, describe, expect, it, vi } from 'vitest';
import { TimeSlices, Wakeup, settledFromOutside } from './delivery-signals.js';

/** One turn of the event loop: every promise callback already queued has run by then. */
const aTurn = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe('delivery signals', () => {
  it('a wait ends when woken, and a wake with no one waiting is dropped', async () => {
    const wakeup = new Wakeup();
    wakeup.wake();
    let ended = false;
    const waiting = wakeup.wait().then(() => (ended = true));
    // A wake kept for later would end the wait at once, in a promise callback: a turn has run them all.
    await aTurn();
    expect(ended).toBe(false);
    wakeup.wake();
    await waiting;
    expect(ended).toBe(true);
  });

  it('a wait with a timeout ends by itself when the timeout has passed, not before', async () => {
    vi.useFakeTimers();
    let ended = false;
    const waiting = new Wakeup().wait(30).then(() => (ended = true));
    await vi.advanceTimersByTimeAsync(29);
    expect(ended).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waiting;
    expect(ended).toBe(true);
  });

  it('settled from outside: resolves once, and an unawaited rejection is no crash', async () => {
    const settled = settledFromOutside();
    settled.resolve();
    settled.reject(new Error('too late'));
    await expect(settled.promise).resolves.toBeUndefined();
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      settledFromOutside().reject(new Error('nobody listens'));
      // Node reports a rejection nobody handled once the promise callbacks queued with it have run: after a turn.
      await aTurn();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });

  it('time slices: the work goes on at once while a slice lasts, and gives the event loop a turn once it is used up', async () => {
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      const slices = new TimeSlices(5);
      // A sentinel queued for the next turn of the loop runs only if the work gives that turn up.
      const sentinel = () => {
        const state = { ran: false };
        setImmediate(() => (state.ran = true));
        return state;
      };
      now = 4;
      const withinTheSlice = sentinel();
      await slices.yieldIfDue();
      expect(withinTheSlice.ran).toBe(false);
      now = 5;
      const sliceUsedUp = sentinel();
      await slices.yieldIfDue();
      expect(sliceUsedUp.ran).toBe(true);
      // A new slice starts after the turn.
      now = 9;
      const nextSlice = sentinel();
      await slices.yieldIfDue();
      expect(nextSlice.ran).toBe(false);
      await aTurn();
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('time slices: after a restart (a wait ended), a new slice begins, however long the wait was', async () => {
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      const slices = new TimeSlices(5);
      const sentinel = { ran: false };
      setImmediate(() => (sentinel.ran = true));
      // A reader idle for a second: without the restart, its slice would be long used up.
      now = 1_000;
      slices.restart();
      now = 1_004;
      await slices.yieldIfDue();
      expect(sentinel.ran).toBe(false);
      await aTurn();
    } finally {
      vi.restoreAllMocks();
    }
  });
});
