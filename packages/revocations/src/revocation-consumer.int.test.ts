import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SigningKeyEvent } from '@tessera/contracts';
import { createKafkaFeed, silentLogger } from '@tessera/feed';
import { createRecorder, kafkaTestEnvironment, signingKeyPublished, tokenRevoked, tokenRotated } from '@tessera/feed/testing';
import { startRevocationConsumer } from './revocation-consumer.js';
import { systemClock } from '@tessera/timing';

const { brokers } = kafkaTestEnvironment('revocation consumer on Kafka');
const seconds = (ms: number) => Math.floor(ms / 1000);

describe.skipIf(!brokers)('revocation consumer on a real Kafka broker', () => {
  it('joining late, it rebuilds from the topic every revocation that can still reject a token before it reports ready', async () => {
    const topic = `tessera.revocations.test-revocations-${randomUUID()}`;
    const feed = createKafkaFeed({ brokers: brokers!, topic, logger: silentLogger });
    await feed.ensureTopic({ partitions: 3 });
    const record = createRecorder();
    const now = systemClock.now();
    const longAgo = now - 3 * 3600_000;
    const recent = Array.from({ length: 20 }, () => `fam-${randomUUID()}`);
    // Long gone: its tokens expired hours ago, so the rebuild reads it but does not keep it.
    await feed.publish([record(tokenRevoked('fam-long-gone', 0, seconds(longAgo)), longAgo)]);
    await feed.publish([
      record(signingKeyPublished('kid-late', seconds(now)), now),
      ...recent.map((familyId, i) => record(i % 2 ? tokenRevoked(familyId, 2, seconds(now)) : tokenRotated(familyId, 2, seconds(now)), now)),
    ]);
    const keys: SigningKeyEvent[] = [];
    const started = systemClock.now();
    const consumer = await startRevocationConsumer({ feed, logger: silentLogger, onSigningKeyEvent: (event) => keys.push(event) });
    expect(consumer.isReady()).toBe(false);
    await consumer.ready;
    console.info(`[kafka] late consumer ready after ${systemClock.now() - started} ms`);
    for (const [i, familyId] of recent.entries()) {
      expect(consumer.isRejected(familyId, 1)).toBe(true);
      expect(consumer.isRejected(familyId, 2)).toBe(i % 2 === 1);
    }
    expect(consumer.isRejected('fam-long-gone', 0)).toBe(false);
    expect(keys.map((k) => k.kid)).toEqual(['kid-late']);
    expect(consumer.stats()).toMatchObject({ applied: 22, duplicatesIgnored: 0, entries: 20 });
    await consumer.close();
    await feed.close();
  });
});
