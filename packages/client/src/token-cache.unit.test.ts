import { describe, expect, it } from 'vitest';
import { TokenCache } from './token-cache.js';
import { isFresh, type CachedToken } from './token-pair.js';

const token = (name: string, obtainedAt: number, lifeMs: number): CachedToken => ({ token: name, obtainedAt, expiresAt: obtainedAt + lifeMs });

describe('TokenCache', () => {
  it('shares one renewal among concurrent callers, and caches its result', async () => {
    let now = 0;
    let renewals = 0;
    const cache = new TokenCache(async () => token(`t${++renewals}`, now, 3_600_000), () => now, 60_000);
    const first = await Promise.all(Array.from({ length: 100 }, () => cache.get()));
    expect(new Set(first.map((t) => t.token))).toEqual(new Set(['t1']));
    now = 3_600_000 - 60_000; // at expires minus the skew
    const second = await Promise.all(Array.from({ length: 100 }, () => cache.get()));
    expect(new Set(second.map((t) => t.token))).toEqual(new Set(['t2']));
    expect(renewals).toBe(2);
  });

  it('a rejected token is never handed out again, even by a renewal already in flight that produced it', async () => {
    const queue = ['t1', 't1', 't2'];
    const cache = new TokenCache(async () => token(queue.shift()!, 0, 3_600_000), () => 0, 60_000);
    expect((await cache.get()).token).toBe('t1');
    const inFlight = cache.renew(undefined); // yields t1 again (say, adopted from a shared store)
    const afterRejection = cache.renew('t1');
    expect((await inFlight).token).toBe('t1');
    expect((await afterRejection).token).toBe('t2');
  });

  it('a failed renewal reaches every waiting caller, and the next call tries again', async () => {
    let attempts = 0;
    const cache = new TokenCache(
      async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('down');
        return token('t', 0, 1000);
      },
      () => 0,
      0,
    );
    const results = await Promise.allSettled([cache.get(), cache.get(), cache.get()]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect((await cache.get()).token).toBe('t');
    expect(attempts).toBe(2);
  });
});

describe('isFresh', () => {
  it('renews the skew before expiry, but caps the skew at half the life of short tokens', () => {
    const hour = token('h', 0, 3_600_000);
    expect(isFresh(hour, 3_540_000 - 1, 60_000)).toBe(true);
    expect(isFresh(hour, 3_540_000, 60_000)).toBe(false);
    const twoSeconds = token('s', 0, 2000);
    expect(isFresh(twoSeconds, 999, 60_000)).toBe(true);
    expect(isFresh(twoSeconds, 1000, 60_000)).toBe(false);
  });
});
