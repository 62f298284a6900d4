import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { silentLogger } from '@tessera/feed';
import { startRevocationConsumer } from '@tessera/revocations';
import { createRelay } from './relay.js';
import { createFileCheckpoint, type RelayCheckpoint } from './relay-checkpoint.js';
import { createRelayWorld } from './testing/relay-world.js';
import { systemClock } from '@tessera/timing';

const { brokers } = kafkaTestEnvironment('relay → Kafka → revocation consumer');
const families = (count: number) => Array.from({ length: count }, () => `fam-${randomUUID()}`);

describe.skipIf(!brokers)('relay on a real Kafka broker', () => {
  it('a revocation appended to the store reaches a downstream consumer, which then rejects the family', async () => {
    const world = await createRelayWorld(brokers!);
    const relay = createRelay({ store: world.store, feed: world.newFeed(), checkpoint: createFileCheckpoint(world.checkpointFile), logger: silentLogger });
    const downstream = await startRevocationConsumer({ feed: world.newFeed(), logger: silentLogger });
    try {
      await relay.start();
      await downstream.ready;
      const [familyId] = families(1) as [string];
      await world.appendFamily(familyId, 0, false);
      // The first publish also connects the producer; measure a revocation on a warm path.
      await expect.poll(() => relay.published(), { timeout: 10_000, interval: 5 }).toBe(1);
      expect(downstream.isRejected(familyId, 0)).toBe(false);
      const appended = systemClock.now();
      await world.appendFamily(familyId, 1, true);
      await expect.poll(() => downstream.isRejected(familyId, 1), { timeout: 10_000, interval: 5 }).toBe(true);
      console.info(`[kafka] append → rejected downstream via relay and Kafka: ${systemClock.now() - appended} ms (one sample, not a benchmark)`);
      await expect.poll(async () => (await relay.lag()).pendingEvents, { timeout: 5_000 }).toBe(0);
      // The checkpoint follows the acknowledgment without holding the pump back: it reaches the head soon after.
      await expect.poll(async () => { const lag = await relay.lag(); return lag.checkpoint === lag.head; }, { timeout: 5_000 }).toBe(true);
    } finally {
      await downstream.close();
      await relay.stop();
      await world.cleanup();
    }
  });

  it('a relay stopped mid-stream after losing checkpoint saves republishes: nothing missing, duplicates ignored', async () => {
    const world = await createRelayWorld(brokers!);
    const downstream = await startRevocationConsumer({ feed: world.newFeed(), logger: silentLogger });
    try {
      await downstream.ready;
      const first = families(50);
      for (const familyId of first) await world.appendFamily(familyId, 1, true);
      // The first relay "dies" after its second checkpoint: later saves never reach the disk, as
      // if it crashed each time between the broker's ack and the fsync.
      const durable = createFileCheckpoint(world.checkpointFile);
      let saves = 0;
      let durablePosition = 0n;
      const crashing: RelayCheckpoint = {
        load: () => durable.load(),
        save: async (position) => {
          saves += 1;
          if (saves > 2) return;
          await durable.save(position);
          durablePosition = position;
        },
      };
      const relay1 = createRelay({ store: world.store, feed: world.newFeed(), checkpoint: crashing, batchSize: 10, logger: silentLogger });
      await relay1.start();
      await expect.poll(() => relay1.published(), { timeout: 10_000, interval: 5 }).toBeGreaterThanOrEqual(40);
      await relay1.stop();
      const publishedBeforeCrash = relay1.published();
      expect(publishedBeforeCrash).toBeLessThan(100);

      const second = families(25);
      for (const familyId of second) await world.appendFamily(familyId, 2, true);
      const relay2 = createRelay({ store: world.store, feed: world.newFeed(), checkpoint: createFileCheckpoint(world.checkpointFile), logger: silentLogger });
      await relay2.start();
      const total = (first.length + second.length) * 2;
      await expect.poll(() => downstream.stats().applied, { timeout: 20_000 }).toBe(total);
      await relay2.stop();
      for (const familyId of [...first, ...second]) expect(downstream.isRejected(familyId, 1)).toBe(true);
      // relay2 resumed mid-log, from the last save that reached the disk: everything relay1 had
      // published after it came again. The log holds only feed events here, so a position is also
      // a count of events. (Saves coalesce and trail the acknowledgments, so where the second save
      // lands depends on timing; the at-least-once bound holds wherever it is.)
      expect(durablePosition).toBeGreaterThan(0n);
      expect(downstream.stats().duplicatesIgnored).toBeGreaterThanOrEqual(publishedBeforeCrash - Number(durablePosition));
      expect(downstream.stats().applied).toBe(total);
    } finally {
      await downstream.close();
      await world.cleanup();
    }
  });

  it('two downstream consumers in separate groups both get every revocation', async () => {
    const world = await createRelayWorld(brokers!);
    const relay = createRelay({ store: world.store, feed: world.newFeed(), checkpoint: createFileCheckpoint(world.checkpointFile), logger: silentLogger });
    const [a, b] = await Promise.all([
      startRevocationConsumer({ feed: world.newFeed(), groupId: `verifier-eu-${randomUUID()}`, logger: silentLogger }),
      startRevocationConsumer({ feed: world.newFeed(), groupId: `verifier-us-${randomUUID()}`, logger: silentLogger }),
    ]);
    try {
      await Promise.all([relay.start(), a.ready, b.ready]);
      const revoked = families(30);
      for (const familyId of revoked) await world.appendFamily(familyId, 3, true);
      await expect.poll(() => a.stats().applied, { timeout: 15_000 }).toBe(revoked.length * 2);
      await expect.poll(() => b.stats().applied, { timeout: 15_000 }).toBe(revoked.length * 2);
      for (const familyId of revoked) {
        expect(a.isRejected(familyId, 3)).toBe(true);
        expect(b.isRejected(familyId, 3)).toBe(true);
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
      await relay.stop();
      await world.cleanup();
    }
  });
});
