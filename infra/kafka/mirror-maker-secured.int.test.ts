import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import kafkajs, { type KafkaConfig } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantAcls, securedKafkaEnvironment } from '@tessera/feed/testing';
import { ensureKafkaJars, startKafkaBroker, type KafkaBroker } from './kafka-broker.js';
import { canRunMirrorMaker, ensureMirrorMakerJars, startMirrorMaker, type MirrorMaker } from './mirror-maker.js';

/**
 * MirrorMaker 2 between two secured clusters, each with its own CA, users and ACLs: region a is
 * the run's shared secured broker, region b one started here. MM2 logs into a as a user that may
 * only read the mirrored topic, and into b as b's admin.
 */
const secured = securedKafkaEnvironment('MirrorMaker 2 between secured brokers');
const runnable = secured !== undefined && canRunMirrorMaker();
if (secured && !runnable) {
  const message = 'SKIPPING MirrorMaker 2 between secured brokers: this machine lacks the MirrorMaker jars and mvn. Secured mirroring is NOT tested in this run. Set TESSERA_REQUIRE_KAFKA=1 to fail instead.';
  if (process.env.TESSERA_REQUIRE_KAFKA === '1') throw new Error(message);
  console.warn(`\n${'!'.repeat(78)}\n!! ${message}\n${'!'.repeat(78)}\n`);
} else if (runnable) {
  // Fetched while the file loads, where no hook timeout runs.
  ensureKafkaJars();
  ensureMirrorMakerJars();
}

describe.skipIf(!runnable)('MirrorMaker 2 between secured brokers (SASL_SSL, SCRAM-SHA-512, ACLs)', () => {
  const a = secured!;
  const topic = `secured.mirrored.${randomUUID()}`;
  let b: KafkaBroker;
  let mirrorMaker: MirrorMaker | undefined;
  const timings: string[] = [];

  const client = (bootstrap: string, caFile: string, username: string, password: string): KafkaConfig => ({
    clientId: 'tessera-secured-mirror-test',
    brokers: [bootstrap],
    ssl: { ca: readFileSync(caFile, 'utf8') },
    sasl: { mechanism: 'scram-sha-512', username, password },
    logLevel: kafkajs.logLevel.NOTHING,
  });

  beforeAll(async () => {
    let started = Date.now();
    b = await startKafkaBroker({ heapMb: 256, security: {} });
    timings.push(`secured broker b ${Date.now() - started} ms`);
    const adminA = new kafkajs.Kafka(client(a.saslSslBootstrap, a.caFile, a.admin.username, a.admin.password)).admin();
    await adminA.connect();
    try {
      await adminA.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] });
    } finally {
      await adminA.disconnect();
    }
    // Reading a's topic and its settings (sync.topic.configs) is all MM2 may do in a.
    await grantAcls(a, [
      { principal: 'User:mirror', resource: 'topic', name: topic, operations: ['READ', 'DESCRIBE', 'DESCRIBE_CONFIGS'] },
      { principal: 'User:relay', resource: 'topic', name: topic, operations: ['WRITE', 'DESCRIBE'] },
    ]);
    started = Date.now();
    mirrorMaker = await startMirrorMaker({
      clusters: { a: a.saslSslBootstrap, b: b.bootstrap },
      clusterSecurity: {
        a: { caFile: a.caFile, sasl: { mechanism: 'SCRAM-SHA-512', username: 'mirror', passwordFile: a.users.mirror!.passwordFile } },
        b: { caFile: b.security!.caFile, sasl: { mechanism: 'SCRAM-SHA-512', username: b.security!.admin.username, passwordFile: b.security!.admin.passwordFile } },
      },
      flows: [{ source: 'a', target: 'b', topics: [topic] }],
      runIn: 'b',
      heapMb: 256,
    });
    timings.push(`MirrorMaker 2 replicating ${Date.now() - started} ms`);
  }, 180_000);

  afterAll(async () => {
    console.info(`[mirror, secured] ${timings.join(', ')}`);
    await mirrorMaker?.destroy();
    await b?.destroy();
  });

  it('mirrors every record a relay user published in a into a.<topic> in b; no password in mm2.properties, the MM2 log or the log of b', async () => {
    const producer = new kafkajs.Kafka(client(a.saslSslBootstrap, a.caFile, 'relay', a.users.relay!.password)).producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const values = Array.from({ length: 30 }, (_, i) => `revocation-${i}-${randomUUID()}`);
    try {
      await producer.send({ topic, acks: -1, messages: values.map((value, i) => ({ key: `fam-${i % 7}`, value })) });
    } finally {
      await producer.disconnect();
    }

    const seen = new Set<string>();
    const consumer = new kafkajs.Kafka(client(b.bootstrap, b.security!.caFile, b.security!.admin.username, b.security!.admin.password)).consumer({ groupId: `secured-mirror-${randomUUID()}`, maxWaitTimeInMs: 200 });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: `a.${topic}`, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void seen.add(message.value?.toString() ?? '') });
      await expect.poll(() => seen.size, { timeout: 30_000, interval: 200 }).toBe(values.length);
    } finally {
      await consumer.disconnect();
    }
    expect([...seen].sort()).toEqual([...values].sort());

    const properties = readFileSync(mirrorMaker!.configFile, 'utf8');
    for (const password of [a.users.mirror!.password, b.security!.admin.password]) expect(properties).not.toContain(password);
    expect(properties).toMatch(/^a\.security\.protocol = SASL_SSL$/m);
    // Nor MM2's log, which prints every client's settings at start, nor the secured broker's, which prints its own.
    const logs = readFileSync(mirrorMaker!.logFile, 'utf8') + readFileSync(b.logFile, 'utf8');
    expect(logs).toMatch(/sasl\.jaas\.config = \[hidden\]/);
    for (const password of [a.users.mirror!.password, b.security!.admin.password]) expect(logs).not.toContain(password);
  });
});
