import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.js';
import { ManualScheduler } from './manual-scheduler.js';
import { Retry, sleep } from './retry.js';

function recordingLogger() {
  const lines: { level: 'warn' | 'info'; fields: Record<string, unknown>; message: string }[] = [];
  return {
    lines,
    logger: {
      warn: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'warn', fields, message }),
      info: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'info', fields, message }),
    },
  };
}

describe('Retry', () => {
  it('waits initialMs after the first failure, doubling up to maxMs, and starts over after a success', () => {
    const retry = new Retry({ backoff: { initialMs: 100, maxMs: 500 } });
    expect([1, 2, 3, 4, 5].map(() => retry.failed(new Error('down')))).toEqual([100, 200, 400, 500, 500]);
    retry.succeeded();
    expect(retry.failed(new Error('down'))).toBe(100);
  });

  it('keeps when the failures began until a success, from its clock', () => {
    const clock = new ManualClock(1_000);
    const retry = new Retry({ backoff: { initialMs: 1, maxMs: 1 }, clock });
    expect(retry.failingSinceMs).toBeUndefined();
    retry.failed(new Error('down'));
    clock.advance(5_000);
    retry.failed(new Error('still down'));
    expect(retry.failingSinceMs).toBe(1_000);
    expect(retry.failures).toBe(2);
    retry.succeeded();
    expect(retry.failingSinceMs).toBeUndefined();
    expect(retry.failures).toBe(0);
  });

  it('logs the first failure and every Nth with the count and extra fields, then the recovery with its length', () => {
    const clock = new ManualClock(0);
    const { lines, logger } = recordingLogger();
    const retry = new Retry({ backoff: { initialMs: 1, maxMs: 1 }, clock, log: { logger, failing: 'cannot reach it', recovered: 'reached it', every: 3, fields: () => ({ pending: 7 }) } });
    for (let i = 0; i < 7; i += 1) retry.failed(new Error(`try ${i + 1}`));
    clock.advance(2_500);
    retry.succeeded();
    expect(lines.map((line) => [line.level, line.message, line.fields.attempts])).toEqual([
      ['warn', 'cannot reach it', 1],
      ['warn', 'cannot reach it', 3],
      ['warn', 'cannot reach it', 6],
      ['info', 'reached it', 7],
    ]);
    expect(lines[0]!.fields).toMatchObject({ pending: 7, err: expect.any(Error) });
    expect(lines[3]!.fields.outageMs).toBe(2_500);
  });

  it('says nothing on a success that ended no failure', () => {
    const { lines, logger } = recordingLogger();
    new Retry({ backoff: { initialMs: 1, maxMs: 1 }, log: { logger, failing: 'f', recovered: 'r' } }).succeeded();
    expect(lines).toEqual([]);
  });

  it('run tries until the attempt succeeds and hands back its value', async () => {
    let calls = 0;
    const outcome = await new Retry({ backoff: { initialMs: 1, maxMs: 2 } }).run(async () => {
      calls += 1;
      if (calls < 4) throw new Error('not yet');
      return 'value';
    });
    expect(outcome).toEqual({ done: true, value: 'value' });
    expect(calls).toBe(4);
  });

  it('run rejects at once with an error retryable refuses', async () => {
    let calls = 0;
    const bug = new TypeError('a bug, not an outage');
    const attempt = async () => {
      calls += 1;
      throw bug;
    };
    await expect(new Retry({ backoff: { initialMs: 1, maxMs: 1 } }).run(attempt, { retryable: (error) => !(error instanceof TypeError) })).rejects.toBe(bug);
    expect(calls).toBe(1);
  });

  it('run waits out the backoff on its scheduler between tries: initialMs, doubling up to maxMs', async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const tries: number[] = [];
    const running = new Retry({ backoff: { initialMs: 100, maxMs: 300 }, clock, scheduler }).run(async () => {
      tries.push(clock.now());
      if (tries.length < 5) throw new Error('down');
      return 'up';
    });
    await scheduler.runDue();
    expect(tries).toEqual([0]);
    // One ms short of each wait, no try; at its end, the next.
    await scheduler.advance(99);
    expect(tries).toEqual([0]);
    await scheduler.advance(1);
    expect(tries).toEqual([0, 100]);
    await scheduler.advanceTo(299);
    expect(tries).toEqual([0, 100]);
    await scheduler.advanceTo(1_000);
    expect(tries).toEqual([0, 100, 300, 600, 900]);
    await expect(running).resolves.toEqual({ done: true, value: 'up' });
  });

  it('run stops when its signal aborts, ending the wait in progress at once', async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const stop = new AbortController();
    let calls = 0;
    const running = new Retry({ backoff: { initialMs: 60_000, maxMs: 60_000 }, clock, scheduler }).run(async () => {
      calls += 1;
      throw new Error('down');
    }, { signal: stop.signal });
    await scheduler.runDue();
    expect(scheduler.pending).toBe(1);
    stop.abort();
    const outcome = await running;
    expect(outcome.done).toBe(false);
    expect(calls).toBe(1);
    expect(scheduler.pending).toBe(0);
    expect(clock.now()).toBe(0);
  });

  it('run gives up rather than start a wait that would end after its deadline', async () => {
    const clock = new ManualClock(10_000);
    let calls = 0;
    const outcome = await new Retry({ backoff: { initialMs: 1_000, maxMs: 1_000 }, clock }).run(
      async () => {
        calls += 1;
        throw new Error('down');
      },
      { deadlineMs: 10_500 },
    );
    expect(outcome).toMatchObject({ done: false, error: expect.any(Error) });
    expect(calls).toBe(1);
  });

  it('refuses a backoff whose longest wait is shorter than its first', () => {
    expect(() => new Retry({ backoff: { initialMs: 10, maxMs: 5 } })).toThrow(RangeError);
  });
});

describe('sleep', () => {
  it('resolves at once for an aborted signal', async () => {
    const stop = new AbortController();
    stop.abort();
    const started = performance.now();
    await sleep(60_000, stop.signal);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
