import { describe, expect, it } from 'vitest';
import { InMemoryEventStore } from '@tessera/event-store';
import { createInProcessFeed, silentLogger } from '@tessera/feed';
import type { RelayCheckpoint } from './relay-checkpoint.js';
import { createRelay } from './relay.js';
import { appendRevocation } from './testing/revocations.js';

/**
 * The checkpoint follows the feed's acknowledgments without pacing the pump: a slow
 * save (two fsyncs on a busy disk) must not hold back the next revocation's publish, and it must
 * never record a position the feed has not acknowledged.
 */

describe('relay checkpoint pace', () => {
  it('publishes later batches while a checkpoint save is still on its way, saves only acknowledged positions, and has the last one saved when stop() resolves', async () => {
    const store = new InMemoryEventStore();
    const feed = createInProcessFeed();
    const acknowledged: bigint[] = [];
    const publish = feed.publish.bind(feed);
    feed.publish = async (events) => {
      await publish(events);
      for (const { position } of events) acknowledged.push(position);
    };
    const saves: bigint[] = [];
    let releaseFirstSave!: () => void;
    const firstSaveHeld = new Promise<void>((resolve) => (releaseFirstSave = resolve));
    const checkpoint: RelayCheckpoint = {
      load: async () => undefined,
      save: async (position) => {
        // Every save records only what the feed had acknowledged by then.
        expect(acknowledged).toContain(position);
        if (saves.length === 0) await firstSaveHeld;
        saves.push(position);
      },
    };
    const relay = createRelay({ store, feed, checkpoint, logger: silentLogger });
    await relay.start();
    try {
      for (const [index, familyId] of ['f1', 'f2', 'f3'].entries()) {
        await appendRevocation(store, familyId);
        // Each one published before the next is appended: three batches, the last two while the first save is held.
        await expect.poll(() => relay.published(), { timeout: 2_000, interval: 2 }).toBe(index + 1);
      }
      expect(acknowledged).toHaveLength(3);
      // All three were published while the first save was still held.
      expect(saves).toEqual([]);
      releaseFirstSave();
      await relay.stop();
      // The held save, then one for the newest acknowledged position (the ones asked for meanwhile collapse).
      expect(saves.at(-1)).toBe(acknowledged.at(-1));
      expect(saves.length).toBeLessThanOrEqual(2);
      expect((await relay.lag()).checkpoint).toBe(acknowledged.at(-1));
    } finally {
      await feed.close();
      await store.close();
    }
  });
});
