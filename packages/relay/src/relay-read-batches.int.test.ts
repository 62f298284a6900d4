import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '@tessera/events';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { silentLogger } from '@tessera/feed';
import { startRevocationConsumer } from '@tessera/revocations';
import { createRelay } from './relay.js';
import { createFileCheckpoint } from './relay-checkpoint.js';
import { createRelayWorld } from './testing/relay-world.js';

const { brokers } = kafkaTestEnvironment('relay: what one commit holds goes out in one publish');

/**
 * The relay has one batch in flight at a time, so an event that misses a batch waits a whole
 * acknowledgement for the next. The events of one commit (here a rotation and a revocation of one
 * family, as a refresh token reuse writes them) are read together and must go out together: the
 * sequence of publishes is recorded on the real Kafka feed, and the downstream consumer shows they
 * arrived, in order.
 */
describe.skipIf(!brokers)('relay on a real Kafka broker: batches follow what was read together', () => {
  it('publishes the events of one commit in one batch, in log order', async () => {
    const world = await createRelayWorld(brokers!);
    const feed = world.newFeed();
    const published: (readonly RecordedEvent[])[] = [];
    const publish = feed.publish.bind(feed);
    feed.publish = async (events) => {
      published.push([...events]);
      await publish(events);
    };
    const relay = createRelay({ store: world.store, feed, checkpoint: createFileCheckpoint(world.checkpointFile), logger: silentLogger });
    const downstream = await startRevocationConsumer({ feed: world.newFeed(), logger: silentLogger });
    try {
      await relay.start();
      await downstream.ready;
      // A first commit warms the path (the producer connects on its first publish).
      const warm = `fam-${randomUUID()}`;
      await world.appendFamily(warm, 0, false);
      await expect.poll(() => relay.published(), { timeout: 10_000, interval: 5 }).toBe(1);

      const familyId = `fam-${randomUUID()}`;
      await world.appendFamily(familyId, 1, true);
      await expect.poll(() => downstream.isRejected(familyId, 1), { timeout: 10_000, interval: 5 }).toBe(true);

      const batches = published.slice(1).map((batch) => batch.map((recorded) => recorded.event.type));
      expect(batches).toEqual([['TokenRotated', 'TokenRevoked']]);
    } finally {
      await downstream.close();
      await relay.stop();
      await world.cleanup();
    }
  });
});
