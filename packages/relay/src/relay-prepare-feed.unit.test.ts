import { describe, expect, it } from 'vitest';
import { InMemoryEventStore } from '@tessera/event-store';
import { createInProcessFeed, silentLogger } from '@tessera/feed';
import type { RelayCheckpoint } from './relay-checkpoint.js';
import { createRelay } from './relay.js';
import { appendRevocation } from './testing/revocations.js';

/**
 * The relay readies its feed (creates the topic) in the background: a broker that is down when
 * the process starts must delay the relay, not the start of the issuer it runs in, and nothing
 * may be published before the topic is readied.
 */
const memoryCheckpoint = (): RelayCheckpoint => {
  let saved: bigint | undefined;
  return { load: async () => saved, save: async (position) => void (saved = position) };
};

describe('relay prepareFeed', () => {
  it('starts at once while the feed cannot be readied, publishes nothing until it can, then everything', async () => {
    const store = new InMemoryEventStore();
    const feed = createInProcessFeed();
    let reachable = false;
    let prepareAttempts = 0;
    const relay = createRelay({
      store,
      feed,
      checkpoint: memoryCheckpoint(),
      logger: silentLogger,
      retryInitialMs: 5,
      retryMaxMs: 20,
      prepareFeed: async () => {
        prepareAttempts += 1;
        if (!reachable) throw new Error('connect ECONNREFUSED');
      },
    });
    await relay.start();
    try {
      await appendRevocation(store, 'f1');
      await expect.poll(() => prepareAttempts, { timeout: 2_000, interval: 5 }).toBeGreaterThanOrEqual(3);
      expect(relay.published()).toBe(0);
      const lag = await relay.lag();
      expect(lag.failingSince).toBeDefined();

      reachable = true;
      await expect.poll(() => relay.published(), { timeout: 2_000, interval: 5 }).toBe(1);
      await appendRevocation(store, 'f2');
      await expect.poll(() => relay.published(), { timeout: 2_000, interval: 5 }).toBe(2);
      expect((await relay.lag()).failingSince).toBeUndefined();
      const attemptsWhenReady = prepareAttempts;
      await appendRevocation(store, 'f3');
      await expect.poll(() => relay.published(), { timeout: 2_000, interval: 5 }).toBe(3);
      // Readied once, not before every publish.
      expect(prepareAttempts).toBe(attemptsWhenReady);
    } finally {
      await relay.stop();
      await feed.close();
      await store.close();
    }
  });

  it('stops promptly while the feed is still unreachable, and publishes nothing', async () => {
    const store = new InMemoryEventStore();
    const feed = createInProcessFeed();
    const published: number[] = [];
    const publish = feed.publish.bind(feed);
    feed.publish = async (events) => {
      published.push(events.length);
      await publish(events);
    };
    let prepareAttempts = 0;
    const relay = createRelay({
      store,
      feed,
      checkpoint: memoryCheckpoint(),
      logger: silentLogger,
      // Far longer than any test may take: stop() can only return by cutting this wait short.
      retryInitialMs: 600_000,
      retryMaxMs: 600_000,
      prepareFeed: async () => {
        prepareAttempts += 1;
        throw new Error('connect ECONNREFUSED');
      },
    });
    await relay.start();
    await appendRevocation(store, 'f1');
    // Refused once: the relay is now in its wait before the next try.
    await expect.poll(() => prepareAttempts).toBe(1);
    await relay.stop();
    expect(prepareAttempts).toBe(1);
    expect(published).toEqual([]);
    await feed.close();
    await store.close();
  });
});
