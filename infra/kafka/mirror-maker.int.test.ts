import { randomUUID } from 'node:crypto';
import kafkajs, { type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canRunKafkaBroker, ensureKafkaJars } from './kafka-broker.js';
import { canRunMirrorMaker, ensureMirrorMakerJars } from './mirror-maker.js';
import { startMirrorLink, type MirrorLink } from './mirror-link.js';
import { canRunToxiproxy, ensureToxiproxy } from '../toxiproxy/toxiproxy.js';
import { until } from '../../test/support/until.js';

/**
 * Two real brokers, Toxiproxy on the link and MirrorMaker 2 pulling a → b: what MM2 promises
 * Tessera's regions, checked against the real parts. It starts its own brokers, so it runs
 * whether or not the test run has a shared one.
 */
const topic = 'tessera.revocations';
const mirrored = `a.${topic}`;
const partitions = 3;

const missing = [
  canRunKafkaBroker() && canRunMirrorMaker() ? undefined : 'java and mvn (or the cached Kafka and MirrorMaker jars)',
  canRunToxiproxy() ? undefined : 'go (or the cached Toxiproxy server)',
].filter((what): what is string => what !== undefined);
if (missing.length > 0) {
  const message = `SKIPPING MirrorMaker 2 integration: this machine lacks ${missing.join(' and ')}. Cross-region mirroring is NOT tested in this run. Set TESSERA_REQUIRE_KAFKA=1 to fail instead.`;
  if (process.env.TESSERA_REQUIRE_KAFKA === '1') throw new Error(message);
  console.warn(`\n${'!'.repeat(78)}\n!! ${message}\n${'!'.repeat(78)}\n`);
} else {
  // Fetched and built here, while the file loads, where no hook timeout runs: on a fresh machine
  // the Toxiproxy build alone takes a minute or two.
  ensureKafkaJars();
  ensureMirrorMakerJars();
  ensureToxiproxy();
}

interface Seen {
  readonly partition: number;
  readonly key: string;
  readonly value: string;
}

/** Everything a topic holds and receives, from its start, in the order each partition delivers it. */
interface TopicRecorder {
  readonly records: Seen[];
  values(): Set<string>;
  stop(): Promise<void>;
}

async function recordTopic(bootstrap: string, name: string): Promise<TopicRecorder> {
  const kafka = new kafkajs.Kafka({ clientId: 'tessera-mirror-test', brokers: [bootstrap], logLevel: kafkajs.logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `mirror-test-${randomUUID()}`, maxWaitTimeInMs: 500 });
  const records: Seen[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic: name, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      records.push({ partition, key: message.key?.toString() ?? '', value: message.value?.toString() ?? '' });
    },
  });
  return { records, values: () => new Set(records.map((r) => r.value)), stop: () => consumer.disconnect() };
}

/** Values per partition in delivery order; with `firstOnly`, a value seen again (a duplicate) is left out. */
function byPartition(records: readonly Seen[], firstOnly = false): string[][] {
  const lists = Array.from({ length: partitions }, () => [] as string[]);
  const seen = new Set<string>();
  for (const record of records) {
    if (firstOnly && seen.has(record.value)) continue;
    seen.add(record.value);
    lists[record.partition]!.push(record.value);
  }
  return lists;
}

describe.skipIf(missing.length > 0)('MirrorMaker 2 between two brokers, through Toxiproxy', () => {
  let link: MirrorLink;
  let producer: Producer;
  let source: TopicRecorder;
  let target: TopicRecorder;
  let sent = 0;

  /** Sends `count` records, keyed over 12 accounts, one request at a time; returns their values. */
  const produce = async (count: number, label: string): Promise<string[]> => {
    const values: string[] = [];
    for (let i = 0; i < count; i++) {
      const value = `${label}-${sent++}`;
      await producer.send({ topic, acks: -1, messages: [{ key: `account-${sent % 12}`, value }] });
      values.push(value);
    }
    return values;
  };

  beforeAll(async () => {
    link = await startMirrorLink({ topics: [topic], partitions });
    console.info(
      `[mirror] brokers ${link.timings.brokers} ms, toxiproxy ${link.timings.toxiproxy} ms, MirrorMaker 2 replicating ${link.timings.mirrorMaker} ms after its start`,
    );
    const kafka = new kafkajs.Kafka({ clientId: 'tessera-mirror-test', brokers: [link.a.bootstrap], logLevel: kafkajs.logLevel.NOTHING });
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: kafkajs.Partitioners.DefaultPartitioner });
    await producer.connect();
    source = await recordTopic(link.a.bootstrap, topic);
    target = await recordTopic(link.b.bootstrap, mirrored);
  }, 240_000);

  afterAll(async () => {
    await target?.stop();
    await source?.stop();
    await producer?.disconnect();
    await link?.stop();
  }, 60_000);

  it('mirrors every keyed record into a.tessera.revocations on its source partition, in the source order, once', async () => {
    const values = await produce(300, 'first');
    await until(() => values.every((v) => target.values().has(v)), 'all 300 records mirrored into b', { timeoutMs: 60_000, everyMs: 20 });
    await until(() => values.every((v) => source.values().has(v)), 'all 300 records read back in a', { timeoutMs: 30_000, everyMs: 20 });

    expect(byPartition(target.records)).toEqual(byPartition(source.records));
    expect(target.records).toHaveLength(values.length);
    // The keys spread over every partition, so the comparison above covers each of them.
    expect(byPartition(source.records).every((list) => list.length > 0)).toBe(true);
    // Same key, same partition in both regions.
    const partitionOfKey = new Map(source.records.map((r) => [r.key, r.partition]));
    expect(target.records.every((r) => partitionOfKey.get(r.key) === r.partition)).toBe(true);
  }, 120_000);

  it('mirrors nothing while the proxy is disabled, then every record held back once it is enabled again', async () => {
    await link.toxiproxy.setEnabled(link.proxyName, false);
    const heldBack = await produce(60, 'partitioned');
    // The sentinel: a consumer of a, as MM2's own consumer is, has read every held-back record, so
    // they were there to fetch. MM2 reaches a only through the proxy: with it disabled, none crossed.
    await until(() => heldBack.every((v) => source.values().has(v)), 'records read back in a', { timeoutMs: 30_000, everyMs: 20 });
    expect(heldBack.filter((v) => target.values().has(v))).toEqual([]);

    await link.toxiproxy.setEnabled(link.proxyName, true);
    await until(() => heldBack.every((v) => target.values().has(v)), 'the held-back records mirrored after the link came back', { timeoutMs: 60_000, everyMs: 20 });
    expect(byPartition(target.records)).toEqual(byPartition(source.records));
  }, 120_000);

  it('loses nothing when MirrorMaker 2 is killed (SIGKILL) mid-stream and started again; duplicates are counted', async () => {
    const before = target.records.length;
    const stream: string[] = [];
    // About 8 s of records: they keep coming before the kill, while MM2 is down, and after its restart.
    const batches = 60;
    const producing = (async () => {
      for (let batch = 0; batch < batches; batch++) {
        stream.push(...(await produce(10, 'crash')));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // Kill once some of the stream has crossed, so the crash falls between offset commits.
    await until(() => stream.length >= 100 && target.values().has(stream[50]!), 'part of the stream mirrored', { timeoutMs: 60_000, everyMs: 20 });
    const mirroredAtKill = stream.filter((v) => target.values().has(v)).length;
    await link.mirrorMaker.stop({ signal: 'SIGKILL' });
    const sentAtKill = stream.length;
    const restartStarted = Date.now();
    await link.mirrorMaker.start();
    const restartMs = Date.now() - restartStarted;
    await producing;
    // The kill fell inside the stream: records were sent after it, while MM2 was down or restarting.
    expect(sentAtKill).toBeLessThan(batches * 10);

    await until(() => stream.every((v) => target.values().has(v)), 'every record of the stream mirrored after the restart', { timeoutMs: 90_000, everyMs: 20 });
    await until(() => stream.every((v) => source.values().has(v)), 'the stream read back in a', { timeoutMs: 30_000, everyMs: 20 });
    const duplicates = target.records.length - target.values().size;
    console.info(
      `[mirror] SIGKILL after ${mirroredAtKill} of ${sentAtKill} sent records had crossed (${stream.length} in all); restart replicating in ${restartMs} ms; ${duplicates} duplicates in b (${target.records.length - before} records delivered for ${stream.length} sent)`,
    );
    // At least once: each partition, read without its repeats, is the source partition in order.
    expect(byPartition(target.records, true)).toEqual(byPartition(source.records));
  }, 180_000);
});
