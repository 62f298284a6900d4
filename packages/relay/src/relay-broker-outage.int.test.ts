import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaTestEnvironment, warmUpKafka } from '@tessera/feed/testing';
import { silentLogger } from '@tessera/feed';
import { startRevocationConsumer } from '@tessera/revocations';
import { startKafkaBroker, type KafkaBroker } from '../../../infra/kafka/kafka-broker.js';
import { createRelay } from './relay.js';
import { createFileCheckpoint } from './relay-checkpoint.js';
import { createRelayWorld } from './testing/relay-world.js';
import { systemClock } from '@tessera/timing';

// This suite stops its broker, so it runs one of its own rather than the run's shared broker.
const { controllable } = kafkaTestEnvironment('relay across a 10 s broker outage', 'own-broker');
const outageMs = 10_000;

describe.skipIf(!controllable)('relay across a broker outage', () => {
  let broker: KafkaBroker;
  beforeAll(async () => {
    broker = await startKafkaBroker();
    await warmUpKafka(broker.bootstrap);
  });
  afterAll(async () => {
    await broker?.destroy();
  });

  it('revocations appended while the broker is down for 10 s are all delivered once it is back', { timeout: 120_000 }, async () => {
    const world = await createRelayWorld(broker.bootstrap);
    const relay = createRelay({
      store: world.store,
      feed: world.newFeed(),
      checkpoint: createFileCheckpoint(world.checkpointFile),
      logger: silentLogger,
      retryMaxMs: 1_000,
    });
    const downstream = await startRevocationConsumer({ feed: world.newFeed(), groupId: `outage-${randomUUID()}`, logger: silentLogger });
    try {
      await relay.start();
      await downstream.ready;
      const before = `fam-${randomUUID()}`;
      await world.appendFamily(before, 1, true);
      await expect.poll(() => downstream.isRejected(before, 1), { timeout: 10_000 }).toBe(true);

      await broker.stop();
      const downAt = systemClock.now();
      const during: string[] = [];
      while (systemClock.now() - downAt < outageMs - 1_000) {
        const familyId = `fam-${randomUUID()}`;
        await world.appendFamily(familyId, 2, true);
        during.push(familyId);
        await new Promise((r) => setTimeout(r, 250));
      }
      await expect.poll(async () => (await relay.lag()).failingSince, { timeout: 5_000 }).toBeDefined();
      const lagDuringOutage = await relay.lag();
      expect(lagDuringOutage.pendingEvents).toBeGreaterThan(0);
      expect(lagDuringOutage.checkpoint).toBeLessThan(lagDuringOutage.head!);
      await new Promise((r) => setTimeout(r, Math.max(0, outageMs - (systemClock.now() - downAt))));

      await broker.start();
      const backAt = systemClock.now();
      await expect.poll(async () => (await relay.lag()).pendingEvents, { timeout: 60_000, interval: 50 }).toBe(0);
      const relayedAfterMs = systemClock.now() - backAt;
      await expect.poll(() => during.every((familyId) => downstream.isRejected(familyId, 2)), { timeout: 60_000, interval: 50 }).toBe(true);
      console.info(
        `[kafka] ${during.length} revocations appended during a ${outageMs} ms outage: relayed ${relayedAfterMs} ms and all rejected downstream ${systemClock.now() - backAt} ms after the broker returned`,
      );
      expect((await relay.lag()).failingSince).toBeUndefined();
      expect(downstream.stats().applied).toBe((during.length + 1) * 2);
    } finally {
      await downstream.close();
      await relay.stop();
      await world.cleanup();
    }
  });
});
