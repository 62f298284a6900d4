/**
 * How long a record takes from a producer in region a to a consumer of its mirror in region b,
 * through MirrorMaker 2 and the Toxiproxy link (mirror-link.ts). Also timed: the same record
 * reaching a consumer in a itself, so what the mirror adds can be told apart from Kafka's own hop.
 *
 *   npx tsx infra/kafka/mirror-latency.ts [--records 200] [--latency 0,40] [--fetch-max-wait-ms 10000] [--pause-ms 100]
 *
 * Records are sent one at a time, each after the previous one has arrived in both regions and a
 * random pause of 0 to --pause-ms (revocations are sparse, and a random pause keeps the sends out
 * of step with MirrorMaker's fetch cycle); a record that has not arrived in 10 s fails the run.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { startMirrorLink } from './mirror-link.js';

const topic = 'tessera.revocations';

export interface LatencySummary {
  readonly latencyEachWayMs: number;
  readonly records: number;
  /** Send start → seen by a consumer of the mirrored topic in b. */
  readonly mirrored: Percentiles;
  /** Send start → seen by a consumer of the topic in a. */
  readonly local: Percentiles;
}

export interface Percentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] ?? Number.NaN };
}

async function main(argv: string[]): Promise<void> {
  const flag = (name: string, fallback: string) => {
    const index = argv.indexOf(`--${name}`);
    return index >= 0 ? (argv[index + 1] ?? fallback) : fallback;
  };
  const records = Number(flag('records', '200'));
  const latencies = flag('latency', '0,40').split(',').map(Number);
  const fetchMaxWaitMs = Number(flag('fetch-max-wait-ms', '10000'));
  const pauseMs = Number(flag('pause-ms', '100'));

  const link = await startMirrorLink({ topics: [topic], mirror: { fetchMaxWaitMs }, log: (line) => console.error(line) });
  const summaries: LatencySummary[] = [];
  const kafkaOf = (bootstrap: string) => new kafkajs.Kafka({ clientId: 'tessera-mirror-latency', brokers: [bootstrap], logLevel: kafkajs.logLevel.NOTHING });
  const producer = kafkaOf(link.a.bootstrap).producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: kafkajs.Partitioners.DefaultPartitioner });
  const arrivals = { a: new Map<string, number>(), b: new Map<string, number>() };
  const consumers = [
    { consumer: kafkaOf(link.a.bootstrap).consumer({ groupId: `latency-a-${randomUUID()}` }), topic, seen: arrivals.a },
    { consumer: kafkaOf(link.b.bootstrap).consumer({ groupId: `latency-b-${randomUUID()}` }), topic: `a.${topic}`, seen: arrivals.b },
  ];
  try {
    await producer.connect();
    for (const { consumer, topic: subscribed, seen } of consumers) {
      await consumer.connect();
      await consumer.subscribe({ topic: subscribed, fromBeginning: false });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (message.value) seen.set(message.value.toString(), Date.now());
        },
      });
    }
    // Consumers that start at the end see only what is sent after they joined: send until one arrives in both.
    for (let warm = 0; ; warm++) {
      const value = `warm-up-${warm}`;
      await producer.send({ topic, acks: -1, messages: [{ key: 'warm-up', value }] });
      await new Promise((r) => setTimeout(r, 500));
      if (arrivals.a.has(value) && arrivals.b.has(value)) break;
      if (warm > 120) throw new Error('no warm-up record arrived in both regions within a minute');
    }
    for (const latencyEachWayMs of latencies) {
      await link.toxiproxy.setLatency(link.proxyName, latencyEachWayMs);
      const mirrored: number[] = [];
      const local: number[] = [];
      for (let i = 0; i < records; i++) {
        const value = `${latencyEachWayMs}-${i}-${randomUUID()}`;
        const sent = Date.now();
        await producer.send({ topic, acks: -1, messages: [{ key: `account-${i % 16}`, value }] });
        const deadline = sent + 10_000;
        while (!arrivals.b.has(value) || !arrivals.a.has(value)) {
          if (Date.now() > deadline) throw new Error(`record ${i} with ${latencyEachWayMs} ms each way did not arrive within 10 s`);
          await new Promise((r) => setTimeout(r, 1));
        }
        mirrored.push(arrivals.b.get(value)! - sent);
        local.push(arrivals.a.get(value)! - sent);
        await new Promise((r) => setTimeout(r, Math.random() * pauseMs));
      }
      const summary = { latencyEachWayMs, records, mirrored: percentiles(mirrored), local: percentiles(local) };
      summaries.push(summary);
      console.error(`${latencyEachWayMs} ms each way: mirrored ${JSON.stringify(summary.mirrored)}, local ${JSON.stringify(summary.local)}`);
    }
    console.log(JSON.stringify({ fetchMaxWaitMs, pauseMs, mirrorMakerStartMs: link.timings.mirrorMaker, summaries }, null, 2));
  } finally {
    for (const { consumer } of consumers) await consumer.disconnect();
    await producer.disconnect();
    await link.stop();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
