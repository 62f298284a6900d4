import { describe, expect, it } from 'vitest';
import { createReadModelsLifecycle, type FollowerProgress } from './read-models-phase.js';

/** A follower whose catch-up the test decides. */
function follower(position?: bigint): FollowerProgress & { catchUp(): void; fail(error: Error): void; isLive: boolean } {
  // Assigned by the executor below, which runs before the constructor returns.
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const whenCaughtUp = new Promise<void>((done, failed) => {
    resolve = done;
    reject = failed;
  });
  const progress = {
    whenCaughtUp,
    isLive: false,
    live: () => progress.isLive,
    lastPosition: () => position,
    catchUp: () => {
      progress.isLive = true;
      resolve();
    },
    fail: (error: Error) => reject(error),
  };
  return progress;
}

describe('the read models phase', () => {
  it('runs a step registered before the follower exists once that follower catches up, and not before', async () => {
    const lifecycle = createReadModelsLifecycle();
    const ran: string[] = [];
    lifecycle.onCaughtUp(() => ran.push('fence'));
    const feeding = follower(7n);
    lifecycle.follow(feeding);
    await Promise.resolve();
    expect(ran).toEqual([]);
    expect(lifecycle.live()).toBe(false);
    expect(lifecycle.lastPosition()).toBe(7n);
    feeding.catchUp();
    await lifecycle.caughtUp;
    expect(ran).toEqual(['fence']);
    expect(lifecycle.live()).toBe(true);
  });

  it('runs a step registered after the catch-up at once', async () => {
    const lifecycle = createReadModelsLifecycle();
    const feeding = follower();
    lifecycle.follow(feeding);
    feeding.catchUp();
    await lifecycle.caughtUp;
    const ran = new Promise<string>((resolve) => lifecycle.onCaughtUp(() => resolve('delivery')));
    await expect(ran).resolves.toBe('delivery');
  });

  it('rejects caughtUp when the follower fails to start, and runs no step', async () => {
    const lifecycle = createReadModelsLifecycle();
    const ran: string[] = [];
    lifecycle.onCaughtUp(() => ran.push('never'));
    const feeding = follower();
    lifecycle.follow(feeding);
    feeding.fail(new Error('store gone'));
    await expect(lifecycle.caughtUp).rejects.toThrow('store gone');
    expect(ran).toEqual([]);
  });

  it('knows nothing applied before a follower is named', () => {
    const lifecycle = createReadModelsLifecycle();
    expect(lifecycle.live()).toBe(false);
    expect(lifecycle.lastPosition()).toBeUndefined();
  });

  it('refuses a second follower of the read models', () => {
    const lifecycle = createReadModelsLifecycle();
    lifecycle.follow(follower());
    expect(() => lifecycle.follow(follower())).toThrow('one follower');
  });
});
