import { describe, expect, it } from 'vitest';
import { Wakeup, settledFromOutside } from './delivery-signals.js';

describe('delivery signals', () => {
  it('a wait ends when woken, and a wake with no one waiting is dropped', async () => {
    const wakeup = new Wakeup();
    wakeup.wake();
    let ended = false;
    const waiting = wakeup.wait().then(() => (ended = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ended).toBe(false);
    wakeup.wake();
    await waiting;
    expect(ended).toBe(true);
  });

  it('a wait with a timeout ends by itself', async () => {
    const started = performance.now();
    await new Wakeup().wait(30);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('settled from outside: resolves once, and an unawaited rejection is no crash', async () => {
    const settled = settledFromOutside();
    settled.resolve();
    settled.reject(new Error('too late'));
    await expect(settled.promise).resolves.toBeUndefined();
    settledFromOutside().reject(new Error('nobody listens'));
    await new Promise((resolve) => setTimeout(resolve, 10));
  });
});
