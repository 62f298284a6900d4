/**
 * Two single-node Kafka clusters, a and b, with MirrorMaker 2 pulling topics from a into b and
 * Toxiproxy on the link: the smallest picture of two regions. The integration test and the
 * latency measurement (mirror-latency.ts) start it; `npm run sim:regions` builds its own.
 *
 * MM2 runs in b and reaches a only through the proxy: a's REMOTE listener advertises the
 * proxy's address, so every connection MM2 makes to a, after the bootstrap too, crosses it.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { freePort, startKafkaBroker, type KafkaBroker } from './kafka-broker.js';
import { startMirrorMaker, type MirrorMaker, type MirrorMakerOptions } from './mirror-maker.js';
import { startToxiproxy, type Toxiproxy } from '../toxiproxy/toxiproxy.js';

export interface MirrorLinkOptions {
  /** Topics made in a (and mirrored to b as `a.<topic>`). */
  readonly topics: readonly string[];
  readonly partitions?: number;
  readonly heapMb?: number;
  /** Passed to startMirrorMaker. */
  readonly mirror?: Pick<MirrorMakerOptions, 'fetchMaxWaitMs' | 'tasks' | 'offsetFlushIntervalMs' | 'extraProperties'>;
  /** Where the brokers, Toxiproxy and MM2 keep their files; default a temp folder, removed by stop(). */
  readonly workDir?: string;
  /** Progress lines; default none. */
  readonly log?: (line: string) => void;
}

export interface MirrorLink {
  readonly a: KafkaBroker;
  readonly b: KafkaBroker;
  readonly toxiproxy: Toxiproxy;
  /** The Toxiproxy proxy in front of a's REMOTE listener: the link MM2 pulls over. */
  readonly proxyName: string;
  readonly mirrorMaker: MirrorMaker;
  /** What each step took, in ms. */
  readonly timings: Readonly<Record<'brokers' | 'toxiproxy' | 'mirrorMaker', number>>;
  stop(): Promise<void>;
}

export async function startMirrorLink(options: MirrorLinkOptions): Promise<MirrorLink> {
  const log = options.log ?? (() => undefined);
  const root = options.workDir ?? mkdtempSync(join(tmpdir(), 'tessera-mirror-link-'));
  mkdirSync(root, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch(() => undefined);
    if (options.workDir === undefined) rmSync(root, { recursive: true, force: true });
  };
  try {
    let started = Date.now();
    const toxiproxy = await startToxiproxy({ workDir: join(root, 'toxiproxy') });
    stops.push(() => toxiproxy.stop());
    const toxiproxyMs = Date.now() - started;
    log(`toxiproxy ${toxiproxy.apiUrl} in ${toxiproxyMs} ms`);

    // The proxy first, on a port it picks, so that a's REMOTE listener can advertise it; its
    // upstream is the port that listener will bind (Toxiproxy dials it only per connection).
    const proxyName = 'kafka-a';
    const remotePort = await freePort();
    const proxy = await toxiproxy.createProxy({ name: proxyName, upstream: `127.0.0.1:${remotePort}` });
    started = Date.now();
    const heapMb = options.heapMb ?? 256;
    const [a, b] = await Promise.all([
      startKafkaBroker({ workDir: join(root, 'kafka-a'), heapMb, remoteListener: { port: remotePort, advertisedPort: proxy.listenPort } }),
      startKafkaBroker({ workDir: join(root, 'kafka-b'), heapMb }),
    ]);
    stops.push(() => a.stop(), () => b.stop());
    const brokersMs = Date.now() - started;
    log(`brokers a ${a.bootstrap} (remote ${proxy.listen}) and b ${b.bootstrap} in ${brokersMs} ms`);

    const admin = new kafkajs.Kafka({ clientId: 'tessera-mirror-link', brokers: [a.bootstrap], logLevel: kafkajs.logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.createTopics({ waitForLeaders: true, topics: options.topics.map((topic) => ({ topic, numPartitions: options.partitions ?? 3, replicationFactor: 1 })) });
    } finally {
      await admin.disconnect();
    }

    started = Date.now();
    const mirrorMaker = await startMirrorMaker({
      clusters: { a: `127.0.0.1:${proxy.listenPort}`, b: b.bootstrap },
      flows: [{ source: 'a', target: 'b', topics: options.topics }],
      runIn: 'b',
      workDir: join(root, 'mm2-b'),
      heapMb,
      ...options.mirror,
    });
    stops.push(() => mirrorMaker.stop());
    const mirrorMakerMs = Date.now() - started;
    log(`MirrorMaker 2 a->b replicating in ${mirrorMakerMs} ms (log ${mirrorMaker.logFile})`);
    return { a, b, toxiproxy, proxyName, mirrorMaker, timings: { brokers: brokersMs, toxiproxy: toxiproxyMs, mirrorMaker: mirrorMakerMs }, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
