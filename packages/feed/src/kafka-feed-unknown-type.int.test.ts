import { randomUUID } from 'node:crypto';
import kafkajs from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaFeed } from './kafka-feed.js';
import { silentLogger, type FeedError, type FeedEvent } from './revocation-feed.js';
import { createRecorder, tokenRevoked, tokenRotated } from './sample-events.js';
import { kafkaTestEnvironment } from './testing/kafka-test-environment.js';

const { brokers } = kafkaTestEnvironment('an event type the consumer does not know, on Kafka');

describe.skipIf(!brokers)('Kafka adapter, a newer event type on the topic', () => {
  const topic = `tessera.revocations.test-unknown-${randomUUID()}`;
  const feed = brokers ? createKafkaFeed({ brokers, topic, logger: silentLogger }) : undefined;
  const kafka = new kafkajs.Kafka({ brokers: (brokers ?? '').split(','), logCreator: () => () => undefined });
  const producer = kafka.producer();
  afterAll(async () => {
    await producer.disconnect();
    await feed?.close();
  });

  it('skips it without an error and goes on to the events after it', async () => {
    await feed!.ensureTopic({ partitions: 1 });
    const record = createRecorder();
    const at = Math.floor(Date.now() / 1000);
    await feed!.publish([record(tokenRotated('fam-1', 1, at))]);
    // Written as a newer Tessera would: the same envelope, an event type this version does not know.
    await producer.connect();
    await producer.send({
      topic,
      messages: [
        {
          key: 'fam-1',
          value: JSON.stringify({ eventId: randomUUID(), position: '100', stream: 'tokenfamily-fam-1', revision: '1', recordedAt: Date.now(), event: { type: 'TokenTeleported', v: 1, familyId: 'fam-1' } }),
          headers: { type: 'TokenTeleported' },
        },
      ],
    });
    await feed!.publish([record(tokenRevoked('fam-1', 1, at))]);

    const received: FeedEvent[] = [];
    const errors: FeedError[] = [];
    const consumer = await feed!.consume({ groupId: `unknown-${randomUUID()}`, onEvent: (event) => void received.push(event), onError: (error) => void errors.push(error) });
    await consumer.ready;
    expect(received.map((event) => event.event.type)).toEqual(['TokenRotated', 'TokenRevoked']);
    expect(errors).toEqual([]);
    expect((await consumer.lag()).pendingEvents).toBe(0);
    await consumer.close();
  });
});
