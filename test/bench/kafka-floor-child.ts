/**
 * The Kafka floor under revocation propagation (revocation-propagation.ts, BENCH_FLOOR=1): a plain
 * kafkajs producer → the broker → a plain kafkajs consumer, nothing of Tessera in the path, set up
 * as Tessera's relay and Kafka-fed verifier set up theirs (an idempotent producer with one request
 * in flight and acks from every replica; a topic of 3 partitions keyed per message; a consumer
 * group fetching with maxWaitTimeInMs 100), in one process so that both ends read one clock.
 *
 * BENCH_FLOOR_PARALLEL slots each publish a message, wait until the consumer has it, and publish
 * the next, as that many revocations in flight each wait for their 401. A sample is `send` called →
 * the message in `eachMessage`. Prints `{"ready":true}` once the consumer has joined its group, runs
 * until SIGTERM, then prints `{"samples":[ms, …]}` (the first BENCH_FLOOR_WARMUP left out) and exits.
 *
 * Environment: BENCH_FLOOR_BROKERS, BENCH_FLOOR_TOPIC, BENCH_FLOOR_PARALLEL (8), BENCH_FLOOR_WARMUP (100).
 */
import { randomUUID } from 'node:crypto';
import kafkajs from 'kafkajs';

/** Epoch ms with sub-ms resolution, as the prober's samples are taken (revocation-probe.ts; not imported: it brings the bench's own SIGTERM handling). */
const epochNow = () => performance.timeOrigin + performance.now();

const brokers = process.env.BENCH_FLOOR_BROKERS!.split(',');
const topic = process.env.BENCH_FLOOR_TOPIC!;
const parallel = Number(process.env.BENCH_FLOOR_PARALLEL ?? 8);
const warmup = Number(process.env.BENCH_FLOOR_WARMUP ?? 100);

const kafka = new kafkajs.Kafka({ clientId: 'bench-floor', brokers, logLevel: kafkajs.logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] });
await admin.disconnect();

const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: kafkajs.Partitioners.DefaultPartitioner });
const consumer = kafka.consumer({ groupId: `bench-floor-${Date.now()}`, allowAutoTopicCreation: false, sessionTimeout: 6_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 100 });
/** The slot waiting for each message, by its key. */
const waiting = new Map<string, () => void>();
let joined!: () => void;
const groupJoined = new Promise<void>((resolve) => (joined = resolve));
consumer.on(consumer.events.GROUP_JOIN, () => joined());
await producer.connect();
await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: false });
await consumer.run({
  eachMessage: async ({ message }) => {
    const key = message.key?.toString('utf8');
    if (key === undefined) return;
    waiting.get(key)?.();
    waiting.delete(key);
  },
});
await groupJoined;

let stopping = false;
const samples: number[] = [];
let timed = 0;
const slots = Array.from({ length: parallel }, async () => {
  while (!stopping) {
    const key = randomUUID();
    const consumed = new Promise<number>((resolve) => waiting.set(key, () => resolve(epochNow())));
    const sentAt = epochNow();
    // A payload of a TokenRevoked's size on Tessera's topic.
    await producer.send({ topic, acks: -1, messages: [{ key, value: JSON.stringify({ type: 'TokenRevoked', familyId: key, sentAt, padding: 'x'.repeat(200) }) }] });
    const latency = (await consumed) - sentAt;
    // Released by the stop, not by the consumer: no sample.
    if (stopping) break;
    timed += 1;
    if (timed > warmup) samples.push(latency);
  }
});
process.on('SIGTERM', () => {
  stopping = true;
  // A slot waiting on a message the consumer will not see any more must not hold the exit.
  for (const resolve of waiting.values()) resolve();
  void Promise.race([Promise.all(slots), new Promise((resolve) => setTimeout(resolve, 2_000))])
    .then(async () => {
      process.stdout.write(`${JSON.stringify({ samples })}\n`);
      await Promise.allSettled([consumer.disconnect(), producer.disconnect()]);
    })
    .finally(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
