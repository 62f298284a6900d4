import { randomUUID } from 'node:crypto';
import { describe } from 'vitest';
import { createKafkaFeed } from './kafka-feed.js';
import { revocationFeedContract } from './revocation-feed-contract.js';
import { silentLogger } from './revocation-feed.js';
import { kafkaTestEnvironment } from './testing/kafka-test-environment.js';

const { brokers } = kafkaTestEnvironment('RevocationFeed contract on Kafka');

describe.skipIf(!brokers)('Kafka adapter', () => {
  // A topic per fixture: tests in other files publish to topics of their own.
  revocationFeedContract('Kafka (kafkajs) on a real broker', async () => {
    const feed = createKafkaFeed({ brokers: brokers!, topic: `tessera.revocations.test-feed-${randomUUID()}`, logger: silentLogger });
    await feed.ensureTopic({ partitions: 3 });
    return { feed, teardown: () => feed.close() };
  });
});
