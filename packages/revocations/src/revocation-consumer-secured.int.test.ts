import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@tessera/feed';
import { createRecorder, grantAcls, securedKafkaEnvironment, tokenRevoked, tokenRotated } from '@tessera/feed/testing';
import { createKafkaFeed, startRevocationConsumer } from './index.js';
import { systemClock } from '@tessera/timing';

const secured = securedKafkaEnvironment('revocation consumer on a secured broker');
const seconds = (ms: number) => Math.floor(ms / 1000);

describe.skipIf(!secured)('revocation consumer on a secured broker (SASL_SSL, ACLs)', () => {
  it('a downstream service passing ssl and sasl (SCRAM-SHA-512) to createKafkaFeed rebuilds and follows the revocations', async () => {
    const s = secured!;
    const topic = `secured.revocations.downstream-${randomUUID()}`;
    const ca = readFileSync(s.caFile, 'utf8');
    const as = (username: string, password: string) =>
      createKafkaFeed({ brokers: s.saslSslBootstrap, topic, logger: silentLogger, ssl: { ca }, sasl: { mechanism: 'scram-sha-512', username, password } });
    const admin = as(s.admin.username, s.admin.password);
    await admin.ensureTopic({ partitions: 3 });
    await admin.close();
    // What a downstream verifier needs: read and describe the topic, read its own groups; nothing else.
    await grantAcls(s, [
      { principal: 'User:relay', resource: 'topic', name: topic, operations: ['WRITE', 'DESCRIBE'] },
      { principal: 'User:reader', resource: 'topic', name: topic, operations: ['READ', 'DESCRIBE'] },
      { principal: 'User:reader', resource: 'group', name: 'tessera-revocations-', prefixed: true, operations: ['READ'] },
    ]);

    const relay = as('relay', s.users.relay!.password);
    const record = createRecorder();
    const now = systemClock.now();
    await relay.publish([record(tokenRevoked('fam-before-start', 1, seconds(now)), now)]);
    const feed = as('reader', s.users.reader!.password);
    const consumer = await startRevocationConsumer({ feed, logger: silentLogger });
    try {
      await consumer.ready;
      expect(consumer.isRejected('fam-before-start', 1)).toBe(true);
      await relay.publish([record(tokenRotated('fam-after-start', 3, seconds(systemClock.now())))]);
      await expect.poll(() => consumer.isRejected('fam-after-start', 2), { timeout: 10_000 }).toBe(true);
      expect(consumer.isRejected('fam-after-start', 3)).toBe(false);
    } finally {
      await consumer.close();
      await feed.close();
      await relay.close();
    }
  });
});
