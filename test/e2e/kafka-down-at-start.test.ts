import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs from 'kafkajs';
import { createKafkaFeed, silentLogger } from '@tessera/feed';
import { kafkaTestEnvironment, warmUpKafka } from '@tessera/feed/testing';
import { startKafkaBroker, type KafkaBroker } from '../../infra/kafka/kafka-broker.js';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * `tessera start` with TESSERA_KAFKA_BROKERS set while the broker is down. Before, the relay's
 * topic creation ran inside the start and the process exited 1 ("Kafka unavailable while creating
 * topic"): a Kafka outage during a deploy took token issuance down with it. Now the issuer serves,
 * the relay waits, and everything reaches Kafka once the broker is back, on a topic made with
 * Tessera's settings (3 partitions), not one auto-created by the first publish.
 */
const { controllable } = kafkaTestEnvironment('all-in-one started while Kafka is down', 'own-broker');
const topic = `tessera.revocations.down-at-start.${process.pid}`;

describe.skipIf(!controllable)('tessera start while its Kafka broker is down', () => {
  let broker: KafkaBroker;
  let tessera: TesseraProcess;
  beforeAll(async () => {
    broker = await startKafkaBroker();
    await warmUpKafka(broker.bootstrap);
    await broker.stop();
  }, 120_000);
  afterAll(async () => {
    await tessera?.stop();
    await broker?.destroy();
  });

  it('becomes ready and serves token operations; once the broker is back the relay creates the topic and publishes what it missed', { timeout: 180_000 }, async () => {
    tessera = await startTessera({ TESSERA_KAFKA_BROKERS: broker.bootstrap, TESSERA_KAFKA_TOPIC: topic });
    expect((await tessera.adminRequest('/readyz')).status).toBe(200);
    const account = await tessera.createAccount();
    const issued = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(issued.status).toBe(200);
    const { token, refresh_token } = issued.json() as { token: string; refresh_token: string };
    expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token })).status).toBe(200);
    const familyId = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string }).fid;
    // The relay says it is behind, and the process says why in its log.
    await expect.poll(async () => Number(/^tessera_relay_pending_events (\d+)/m.exec((await tessera.adminRequest('/metrics')).text)?.[1] ?? 0), { timeout: 10_000 }).toBeGreaterThan(0);
    // Once kafkajs' own connection retries under ensureTopic have run out (a few seconds).
    await expect.poll(() => tessera.logs().includes('relay could not reach the feed to ready its topic; retrying'), { timeout: 20_000, interval: 100 }).toBe(true);

    await broker.start();
    const seen: string[] = [];
    const feed = createKafkaFeed({ brokers: broker.bootstrap, topic, logger: silentLogger });
    // The topic appears once the relay has made it; consume() fails until then.
    await until(
      () =>
        feed
          .consume({ groupId: `down-at-start-${Date.now()}`, since: 0, onEvent: ({ event }) => void seen.push(`${event.type}:${'familyId' in event ? event.familyId : ''}`) })
          .then(() => true)
          .catch(() => false),
      `topic ${topic} created after the broker's return`,
      { timeoutMs: 60_000, everyMs: 500 },
    );
    try {
      await expect.poll(() => seen.includes(`TokenRevoked:${familyId}`), { timeout: 60_000, interval: 100 }).toBe(true);
      const admin = new kafkajs.Kafka({ brokers: [broker.bootstrap], logLevel: kafkajs.logLevel.NOTHING }).admin();
      await admin.connect();
      try {
        const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
        expect(metadata.topics[0]!.partitions).toHaveLength(3);
      } finally {
        await admin.disconnect();
      }
      await expect.poll(async () => Number(/^tessera_relay_pending_events (\d+)/m.exec((await tessera.adminRequest('/metrics')).text)?.[1] ?? -1), { timeout: 10_000 }).toBe(0);
    } finally {
      await feed.close();
    }
  });
});
