import { describe, expect, it } from 'vitest';
import { ManualClock } from '@tessera/timing';
import type { Budget } from './attempt-limiter.js';
import { createInMemoryAttemptLimiter } from './in-memory-attempt-limiter.js';

const pair: Budget = { key: 'login:credential:v5:tsl_a|127.0.0.1', scope: 'credential', limit: 3 };
const address: Budget = { key: 'login:address:127.0.0.1', scope: 'address', limit: 5 };

function clock() {
  const manual = new ManualClock(1_000_000);
  return { clock: manual, advance: (seconds: number) => manual.advance(seconds * 1000) };
}

async function failTimes(limiter: ReturnType<typeof createInMemoryAttemptLimiter>, budgets: Budget[], times: number) {
  for (let i = 0; i < times; i += 1) await limiter.recordFailure(budgets);
}

describe('the in-memory attempt limiter', () => {
  it('allows `limit` failures, then throttles with the time until one more fits (window / limit)', async () => {
    const time = clock();
    const limiter = createInMemoryAttemptLimiter({ windowSeconds: 300, clock: time.clock });
    await failTimes(limiter, [pair], 2);
    expect(await limiter.check([pair])).toBeUndefined();
    await limiter.recordFailure([pair]);
    expect(await limiter.check([pair])).toEqual({ scope: 'credential', retryAfterSeconds: 100 });
  });

  it('refills evenly over the window: one more attempt after window / limit, all of them after the window', async () => {
    const time = clock();
    const limiter = createInMemoryAttemptLimiter({ windowSeconds: 300, clock: time.clock });
    await failTimes(limiter, [pair], 3);
    time.advance(99);
    expect(await limiter.check([pair])).toEqual({ scope: 'credential', retryAfterSeconds: 1 });
    time.advance(1);
    expect(await limiter.check([pair])).toBeUndefined();
    await limiter.recordFailure([pair]);
    expect(await limiter.check([pair])).toMatchObject({ scope: 'credential' });
    time.advance(300);
    await failTimes(limiter, [pair], 2);
    expect(await limiter.check([pair])).toBeUndefined();
  });

  it('names the budget that is spent when several are asked, and the longest wait when several are', async () => {
    const time = clock();
    const limiter = createInMemoryAttemptLimiter({ windowSeconds: 300, clock: time.clock });
    const otherPair: Budget = { ...pair, key: 'login:credential:v5:tsl_b|127.0.0.1' };
    await failTimes(limiter, [pair, address], 3);
    await failTimes(limiter, [otherPair, address], 2);
    // tsl_b's own budget has room; the address's is spent.
    expect(await limiter.check([otherPair, address])).toEqual({ scope: 'address', retryAfterSeconds: 60 });
    // Both spent: the address frees up in 60 s, the pair in 100 s.
    expect(await limiter.check([pair, address])).toEqual({ scope: 'credential', retryAfterSeconds: 100 });
  });

  it('keeps budgets apart: another address, or another credential, is not charged', async () => {
    const limiter = createInMemoryAttemptLimiter({ windowSeconds: 300, clock: clock().clock });
    await failTimes(limiter, [pair], 10);
    expect(await limiter.check([{ ...pair, key: 'login:credential:v5:tsl_a|127.0.0.2' }])).toBeUndefined();
    expect(await limiter.check([{ ...pair, key: 'login:credential:v5:tsl_b|127.0.0.1' }])).toBeUndefined();
  });

  it('reset forgives a budget at once', async () => {
    const limiter = createInMemoryAttemptLimiter({ windowSeconds: 300, clock: clock().clock });
    await failTimes(limiter, [pair, address], 3);
    await limiter.reset([pair]);
    expect(await limiter.check([pair])).toBeUndefined();
    expect(await limiter.check([address])).toBeUndefined();
    await failTimes(limiter, [address], 2);
    expect(await limiter.check([address])).toMatchObject({ scope: 'address' });
  });

  it('holds at most maxEntries budgets, forgetting the one that failed longest ago', async () => {
    const limiter = createInMemoryAttemptLimiter({ windowSeconds: 300, clock: clock().clock, maxEntries: 2 });
    const budget = (name: string): Budget => ({ key: name, scope: 'credential', limit: 1 });
    await limiter.recordFailure([budget('a')]);
    await limiter.recordFailure([budget('b')]);
    await limiter.recordFailure([budget('a')]);
    await limiter.recordFailure([budget('c')]);
    expect(await limiter.check([budget('b')])).toBeUndefined();
    expect(await limiter.check([budget('a')])).toMatchObject({ scope: 'credential' });
    expect(await limiter.check([budget('c')])).toMatchObject({ scope: 'credential' });
  });
});
