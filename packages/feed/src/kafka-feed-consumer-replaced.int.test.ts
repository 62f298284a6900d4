import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Consumer, Kafka } from 'kafkajs';
import { createKafkaFeed, type KafkaRevocationFeed } from './kafka-feed.js';
import type { FeedLogger } from './revocation-feed.js';
import { createRecorder, tokenRevoked } from './sample-events.js';
import { kafkaTestEnvironment } from './testing/kafka-test-environment.js';
import { systemClock } from '@tessera/timing';

const { brokers } = kafkaTestEnvironment('feed consumer replaced after kafkajs gives up');

type CrashListener = (event: { payload: { error: Error; restart: boolean } }) => void;

/**
 * kafkajs gives up on a consumer for good after a non-retriable error, such as the "Failed to find
 * group coordinator" a broker shutting down mid-rejoin produces (about 2 in 5 runs of sim:regions,
 * never on demand). This test makes the real consumer give up the way kafkajs does it: disconnect
 * it, then emit its crash with `restart: false`. Everything else is the real feed on a real broker.
 */
function recordConsumers(feed: KafkaRevocationFeed) {
  const created: { consumer: Consumer; crash: CrashListener[] }[] = [];
  // The feed's kafkajs client is private; wrapping its consumer factory is the only way in without a test-only option.
  const kafka = (feed as unknown as { kafka: Kafka }).kafka;
  const original = kafka.consumer.bind(kafka);
  kafka.consumer = (config) => {
    const consumer = original(config);
    const entry = { consumer, crash: [] as CrashListener[] };
    const on = consumer.on.bind(consumer);
    consumer.on = ((eventName: string, listener: CrashListener) => {
      if (eventName === consumer.events.CRASH) entry.crash.push(listener);
      return on(eventName as typeof consumer.events.CRASH, listener);
    }) as Consumer['on'];
    created.push(entry);
    return consumer;
  };
  return {
    created,
    /** What kafkajs does with a non-retriable crash: disconnect, then tell the listeners it will not restart. */
    async giveUp(index: number) {
      const entry = created[index]!;
      await entry.consumer.disconnect();
      for (const listener of entry.crash) listener({ payload: { error: new Error('KafkaJSNonRetriableError: Failed to find group coordinator'), restart: false } });
    },
  };
}

describe.skipIf(!brokers)('Kafka feed consumer that kafkajs gives up on', () => {
  it('is replaced, and the replacement hands on every later event once, resuming after the last one handed on', { timeout: 120_000 }, async () => {
    const warnings: string[] = [];
    const logger: FeedLogger = { info: () => undefined, warn: (_details, message) => void warnings.push(message ?? ''), error: () => undefined };
    const feed = createKafkaFeed({ brokers: brokers!, topic: `tessera.revocations.test-replaced-${randomUUID()}`, logger });
    await feed.ensureTopic({ partitions: 3 });
    const consumers = recordConsumers(feed);
    const deliveries = new Map<string, number>();
    const record = createRecorder(BigInt(systemClock.now()) * 1000n);
    const publish = async (count: number) => {
      const familyIds = Array.from({ length: count }, () => `fam-${randomUUID()}`);
      await feed.publish(familyIds.map((familyId) => record(tokenRevoked(familyId, 1, Math.floor(systemClock.now() / 1000)))));
      return familyIds;
    };
    const following = await feed.consume({
      groupId: `replaced-${randomUUID()}`,
      onEvent: ({ event }) => {
        if ('familyId' in event) deliveries.set(event.familyId, (deliveries.get(event.familyId) ?? 0) + 1);
      },
    });
    try {
      await following.ready;
      const before = await publish(30);
      await expect.poll(() => before.every((familyId) => deliveries.has(familyId)), { timeout: 30_000, interval: 50 }).toBe(true);

      await consumers.giveUp(0);
      const after = await publish(30);
      await expect
        .poll(() => after.filter((familyId) => deliveries.has(familyId)).length, { timeout: 30_000, interval: 50, message: 'events published after kafkajs gave up, handed on' })
        .toBe(after.length);
      expect(consumers.created).toHaveLength(2);
      expect(warnings).toContain('feed consumer crashed and kafkajs gave up on it; replacing it');
      expect(warnings).toContain('feed consumer replaced; following the topic again');
      // Nothing handed on twice: the replacement started after the last event its predecessor handed on.
      expect([...before, ...after].map((familyId) => deliveries.get(familyId))).toEqual(Array.from({ length: 60 }, () => 1));
    } finally {
      await following.close();
      await feed.close();
    }
  });
});
