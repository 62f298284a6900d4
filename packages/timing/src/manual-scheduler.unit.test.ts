import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.js';
import { ManualScheduler } from './manual-scheduler.js';
import { systemScheduler } from './scheduler.js';

describe('ManualScheduler', () => {
  it('runs nothing until time is moved, then what fell due in time order, each with the clock at its due time', async () => {
    const clock = new ManualClock(1_000);
    const scheduler = new ManualScheduler(clock);
    const ran: [string, number][] = [];
    scheduler.after(300, () => ran.push(['300', clock.now()]));
    scheduler.after(100, () => ran.push(['100', clock.now()]));
    scheduler.after(100, () => ran.push(['100 made second', clock.now()]));
    scheduler.after(900, () => ran.push(['900', clock.now()]));
    expect(ran).toEqual([]);
    await scheduler.advance(500);
    expect(ran).toEqual([
      ['100', 1_100],
      ['100 made second', 1_100],
      ['300', 1_300],
    ]);
    expect(clock.now()).toBe(1_500);
    expect(scheduler.pending).toBe(1);
  });

  it('repeats a timer every period until cancelled', async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const ran: number[] = [];
    const cancel = scheduler.every(250, () => ran.push(clock.now()));
    await scheduler.advanceTo(1_000);
    expect(ran).toEqual([250, 500, 750, 1_000]);
    cancel();
    await scheduler.advance(1_000);
    expect(ran).toEqual([250, 500, 750, 1_000]);
    expect(scheduler.pending).toBe(0);
  });

  it('runs a timer a callback makes when it falls due within the same advance', async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const ran: number[] = [];
    scheduler.after(100, () => {
      ran.push(clock.now());
      scheduler.after(100, () => ran.push(clock.now()));
    });
    await scheduler.advance(250);
    expect(ran).toEqual([100, 200]);
  });

  it('lets an async callback that awaits only promises settle before the next timer and before advance resolves', async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const steps: string[] = [];
    const chain = async () => {
      for (let i = 0; i < 20; i += 1) await Promise.resolve();
      steps.push('first settled');
    };
    scheduler.after(10, () => void chain());
    scheduler.after(20, () => steps.push('second ran'));
    await scheduler.advance(30);
    expect(steps).toEqual(['first settled', 'second ran']);
  });

  it('ends a sleep when time passes it, or at once when its signal aborts', async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    let woke = false;
    const sleeping = scheduler.sleep(1_000).then(() => (woke = true));
    await scheduler.advance(999);
    expect(woke).toBe(false);
    await scheduler.advance(1);
    await sleeping;
    expect(woke).toBe(true);

    const stop = new AbortController();
    const aborted = scheduler.sleep(60_000, stop.signal);
    stop.abort();
    await aborted;
    expect(scheduler.pending).toBe(0);
    expect(clock.now()).toBe(1_000);
  });

  it('refuses to move time backwards and a repeating timer without a period', async () => {
    const scheduler = new ManualScheduler(new ManualClock(5_000));
    await expect(scheduler.advanceTo(4_999)).rejects.toThrow(RangeError);
    await expect(scheduler.advance(-1)).rejects.toThrow(RangeError);
    expect(() => scheduler.every(0, () => undefined)).toThrow(RangeError);
  });
});

describe('systemScheduler', () => {
  it('runs a one-shot timer on the machine time, and a cancelled one not at all', async () => {
    const ran: string[] = [];
    const cancel = systemScheduler.after(1, () => ran.push('cancelled'));
    cancel();
    await new Promise<void>((resolve) => systemScheduler.after(5, () => resolve()));
    // The sentinel (made later, due later) ran: the cancelled timer, due first, would have run before it.
    expect(ran).toEqual([]);
  });
});
