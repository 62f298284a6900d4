/**
 * Revocation propagation: from the moment revoke-oauth-token answers at the
 * home all-in-one to the moment a verifier fed only by Kafka rejects the token, over a real
 * broker on loopback. Run alone:
 * `node --conditions=tessera-source --import tsx test/bench/revocation-propagation.ts`
 * (BENCH_PROPAGATION_PARALLEL, BENCH_REVOCATIONS, BENCH_PROBE, BENCH_POLL_MS, BENCH_HOPS=0, BENCH_PIN=0, BENCH_FLOOR=1).
 *
 * Method: pre-issue the pairs (not measured); then, `parallel` at a time, revoke one and poll the
 * remote verifier's forward-auth with its access token every `pollMs` until it answers 401. A
 * sample is therefore an upper bound, early by at most one poll round trip (≈1 ms here). Polls
 * reuse one keep-alive connection per worker, as a reverse proxy would (BENCH_PROBE=new-connection
 * gives the earlier method: a TLS handshake per poll). The prober (revoke + polls) runs in a child
 * process of its own (revocation-probe-child.ts): with 8 in flight its 8,000 requests a second
 * used to share this process's event loop with the watcher and delay the timestamps being taken.
 * With pinning (pinning.ts) the prober is on the load generator's CPU and both servers on the
 * other; the broker and this process run unpinned. With `hops`, a plain kafkajs consumer in this
 * process splits each sample at the moment the message became readable.
 *
 * With `floor` (BENCH_FLOOR=1) the same run also times the Kafka floor under it, nothing of Tessera
 * in that path: a plain kafkajs producer → the same broker → a plain kafkajs consumer, in a child
 * of its own on the servers' CPU (kafka-floor-child.ts), `parallel` messages in flight, beside the
 * very prober and servers the run loads the machine with. What the floor's p99 is, a Tessera-fed
 * verifier cannot beat on this machine.
 */
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { canRunKafkaBroker, startKafkaBroker, type KafkaBroker } from '../../infra/kafka/kafka-broker.js';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';
import { startChild } from './children.js';
import { processCpuSeconds, processRunQueueWaitSeconds } from './cpu-time.js';
import { allowedCpus, detectPinning, type Pinning } from './pinning.js';
import { atMost, type Row } from './report.js';
import { epochNow, probeInChild, type Probe, type ProbeSample } from './revocation-probe.js';

export type { Probe } from './revocation-probe.js';

export interface Percentiles {
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface PropagationResult extends Percentiles {
  readonly samples: number;
  readonly targetP99Ms: number;
  /** How the remote verifier was polled: one keep-alive connection per worker, or a new TLS connection per poll. */
  readonly probe: Probe;
  /** Revocations timed at once; each has a poller hitting the verifier every pollMs. */
  readonly parallel: number;
  /**
   * Where the time goes, each hop from the clocks of one machine (ms, may be negative by clock
   * granularity): `committed` the event's recordedAt (store commit) → revoke answered;
   * `broker` answered → a plain kafkajs consumer in the bench process has the message (relay
   * read + publish + broker + one fetch); `verifier` that moment → the verifier's first 401
   * (its consumer, projection apply, and the poll itself).
   */
  readonly hops?: { readonly committed: Percentiles; readonly broker: Percentiles; readonly verifier: Percentiles; readonly seen: number };
  /** With `floor`: publish → consume of plain kafkajs clients on the same broker, `parallel` in flight, beside the same load (kafka-floor-child.ts). */
  readonly floor?: Percentiles & { readonly samples: number; readonly cpus: string };
  /** The CPUs each process was allowed, read back from /proc: the report shows the pinning took. */
  readonly cpus: { readonly prober: string; readonly home: string; readonly verifier: string };
  /**
   * What the probing cost while it ran (warm-up included): polls a second sent to the verifier,
   * and the CPU the home all-in-one and the verifier used, in % of one core (all their threads).
   * Both servers share one core when pinned: together near 100 means the figures include queueing for it.
   */
  readonly load: {
    readonly pollsPerSecond: number;
    readonly homeCpuPercent: number;
    readonly verifierCpuPercent: number;
    /** Time their threads were runnable but waited for a CPU, in % of the run (cpu-time.ts): queueing for a core, not in our code. */
    readonly homeWaitPercent: number | undefined;
    readonly verifierWaitPercent: number | undefined;
    readonly proberWaitPercent: number | undefined;
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round = (n: number) => Math.round(n * 10) / 10;

function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50Ms: round(percentile(sorted, 50)), p90Ms: round(percentile(sorted, 90)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted[sorted.length - 1]!) };
}

interface Sighting {
  readonly seenAt: number;
  readonly recordedAt: number;
}

/**
 * A plain kafkajs consumer in the bench process, as a kcat would be: every TokenRevoked from
 * the end of the topic, noted by family with the time it arrived here.
 */
async function watchTopic(brokers: string, topic: string): Promise<{ sightings: Map<string, Sighting>; stop: () => Promise<void> }> {
  const kafka = new kafkajs.Kafka({ clientId: 'bench-watch', brokers: brokers.split(','), logLevel: kafkajs.logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `bench-watch-${Date.now()}`, maxWaitTimeInMs: 100 });
  const sightings = new Map<string, Sighting>();
  let assigned!: () => void;
  const joined = new Promise<void>((resolve) => (assigned = resolve));
  consumer.on(consumer.events.GROUP_JOIN, () => assigned());
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: false });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const seenAt = epochNow();
      if (message.headers?.type?.toString() !== 'TokenRevoked' || !message.value) return;
      const value = JSON.parse(message.value.toString('utf8')) as { recordedAt: number; event: { familyId: string } };
      sightings.set(value.event.familyId, { seenAt, recordedAt: value.recordedAt });
    },
  });
  await joined;
  return { sightings, stop: () => consumer.disconnect() };
}

/**
 * BENCH_PROPAGATION_PARALLEL: revocations timed at once, each with its own poller. One by default
 * for a run alone; `npm run bench` measures 1 and 8 (run.ts). Each poller sends the verifier a
 * request every millisecond; they run in a child process of their own, so eight of them no longer
 * delay this process's watcher and timestamps (docs/benchmarks.md, "Revocation propagation").
 */
export function propagationParallel(): number {
  const parallel = Number(process.env.BENCH_PROPAGATION_PARALLEL ?? defaultParallel);
  if (!Number.isInteger(parallel) || parallel < 1) throw new Error(`BENCH_PROPAGATION_PARALLEL must be a whole number ≥ 1, got ${process.env.BENCH_PROPAGATION_PARALLEL}`);
  return parallel;
}
const defaultParallel = 1;

/** Revocations in flight for `npm run bench`'s second row: a burst, as an account's tokens revoked at once. */
export const propagationInFlight = 8;

/** The p99 each row is held to: one at a time, and eight in flight (which queue behind each other on the way). */
export function propagationTargetP99Ms(parallel: number): number {
  return parallel === 1 ? 25 : 40;
}

/** The one at a time row holds p50 ≤ 10 ms too; the in-flight row its p99 only. */
const propagationTargetP50Ms = (parallel: number): number | undefined => (parallel === 1 ? 10 : undefined);

/** The bench table's row for one `parallel`; `measured` undefined when no broker could be had. */
export function propagationRow(parallel: number, measured: PropagationResult | undefined): Row {
  const targetP50 = propagationTargetP50Ms(parallel);
  const target = `${targetP50 === undefined ? '' : `p50 ≤ ${targetP50}, `}p99 ≤ ${propagationTargetP99Ms(parallel)}`;
  const what = `revocation → rejected via Kafka, ${parallel} at a time, p50 / p99 ms`;
  if (!measured) return { what, tessera: 'not measured', peer: '—', ratio: '—', target, met: false, distance: 'no broker' };
  const p50 = targetP50 === undefined ? undefined : atMost(measured.p50Ms, targetP50, ' ms');
  const p99 = atMost(measured.p99Ms, measured.targetP99Ms, ' ms');
  return {
    what: `${what} (${measured.samples})`,
    tessera: `${measured.p50Ms} / ${measured.p99Ms}`,
    peer: '—',
    ratio: '—',
    target,
    met: (p50?.met ?? true) && p99.met,
    distance: `${p50 ? `p50 ${p50.distance}; ` : ''}p99 ${p99.distance}`,
  };
}

export async function measureRevocationPropagation(
  options: { revocations?: number; warmup?: number; parallel?: number; pollMs?: number; probe?: Probe; hops?: boolean; floor?: boolean; pinning?: Pinning } = {},
): Promise<PropagationResult> {
  const revocations = options.revocations ?? 1000;
  const parallel = options.parallel ?? defaultParallel;
  const warmup = options.warmup ?? 100;
  const pollMs = options.pollMs ?? 1;
  const probe = options.probe ?? 'keep-alive';
  const pinning = options.pinning ?? detectPinning();
  // The servers on their CPU, the prober child on the load generator's: neither takes the other's turns.
  const serverCpus = pinning.pinned ? { cpuList: pinning.serverCpus } : {};
  let broker: KafkaBroker | undefined;
  let brokers = process.env.TESSERA_KAFKA_BROKERS;
  if (!brokers) {
    if (!canRunKafkaBroker()) throw new Error('no Kafka broker: set TESSERA_KAFKA_BROKERS or install java and maven');
    broker = await startKafkaBroker();
    brokers = broker.bootstrap;
  }
  const topic = `tessera.revocations.bench.${Date.now()}`;
  let home: TesseraProcess | undefined;
  let remote: TesseraProcess | undefined;
  let watch: Awaited<ReturnType<typeof watchTopic>> | undefined;
  let floor: Awaited<ReturnType<typeof startFloor>> | undefined;
  try {
    home = await startTessera({ TESSERA_KAFKA_BROKERS: brokers, TESSERA_KAFKA_TOPIC: topic, TESSERA_LOG_LEVEL: 'warn' }, serverCpus);
    remote = await startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers,
        TESSERA_KAFKA_TOPIC: topic,
        TESSERA_VERIFIER_SOURCE: 'kafka',
        TESSERA_ISSUER_JWKS_URL: `${home.baseUrl}/.well-known/jwks.json`,
        NODE_EXTRA_CA_CERTS: join(home.dataDir, 'tls', 'self-signed.crt'),
        TESSERA_LOG_LEVEL: 'warn',
      },
      { command: 'verifier', ...serverCpus },
    );
    const account = await home.createAccount();
    const pairs: { token: string; refresh_token: string }[] = [];
    // The first `warmup` revocations go through the whole path untimed (JIT of three processes and the broker).
    for (let i = 0; i < revocations + warmup; i += 1) {
      const answer = await home.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
      pairs.push(answer.json() as { token: string; refresh_token: string });
    }
    if (options.hops) watch = await watchTopic(brokers, topic);
    if (options.floor) floor = await startFloor(brokers, `${topic}.floor`, parallel, warmup, pinning);
    const homeCpus = allowedCpus(home.pid);
    const cpuBefore = { home: processCpuSeconds(home.pid), verifier: processCpuSeconds(remote.pid) };
    const waitedBefore = { home: processRunQueueWaitSeconds(home.pid), verifier: processRunQueueWaitSeconds(remote.pid) };
    const { samples, cpus: proberCpus, polls, seconds, waitPercent: proberWaitPercent } = await probeInChild({
      pairs,
      parallel,
      warmup,
      pollMs,
      probe,
      pinning,
      home: { baseUrl: home.baseUrl, caFile: join(home.dataDir, 'tls', 'self-signed.crt') },
      remote: { baseUrl: remote.baseUrl, caFile: join(remote.dataDir, 'tls', 'self-signed.crt') },
    });
    const floorSamples = await floor?.stop();
    const busy = (pid: number, before: number) => Math.round(((processCpuSeconds(pid) - before) / seconds) * 100);
    const waiting = (pid: number, before: number | undefined) => {
      const after = processRunQueueWaitSeconds(pid);
      return after === undefined || before === undefined ? undefined : Math.round(((after - before) / seconds) * 100);
    };
    const load = {
      pollsPerSecond: Math.round(polls / seconds),
      homeCpuPercent: busy(home.pid, cpuBefore.home),
      verifierCpuPercent: busy(remote.pid, cpuBefore.verifier),
      homeWaitPercent: waiting(home.pid, waitedBefore.home),
      verifierWaitPercent: waiting(remote.pid, waitedBefore.verifier),
      proberWaitPercent,
    };
    const latencies = samples.map(({ answeredAt, rejectedAt }) => rejectedAt - answeredAt);
    return {
      samples: latencies.length,
      ...percentiles(latencies),
      targetP99Ms: propagationTargetP99Ms(parallel),
      probe,
      parallel,
      cpus: { prober: proberCpus, home: homeCpus, verifier: allowedCpus(remote.pid) },
      load,
      ...(watch ? { hops: hopsOf(samples, watch.sightings) } : {}),
      ...(floor && floorSamples ? { floor: { samples: floorSamples.length, ...percentiles(floorSamples), cpus: floor.cpus } } : {}),
    };
  } finally {
    await floor?.stop();
    await watch?.stop();
    await remote?.stop();
    await home?.stop();
    await broker?.destroy();
  }
}

/** The floor's child, started and joined to its group: `stop` ends it and gives its samples (ms), once. */
async function startFloor(brokers: string, topic: string, parallel: number, warmup: number, pinning: Pinning): Promise<{ readonly cpus: string; stop: () => Promise<number[]> }> {
  const child = await startChild<{ ready: boolean }>('kafka-floor-child.ts', {
    env: { BENCH_FLOOR_BROKERS: brokers, BENCH_FLOOR_TOPIC: topic, BENCH_FLOOR_PARALLEL: String(parallel), BENCH_FLOOR_WARMUP: String(warmup) },
    forwardStderr: true,
    // Where Tessera's relay and verifier run: it shares their core, as their clients do.
    ...(pinning.pinned ? { cpuList: pinning.serverCpus } : {}),
  });
  let printed = '';
  child.process.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  // 'exit' can come before the last of stdout has been read: the samples are read once it has ended.
  const ended = new Promise<void>((resolve) => child.process.stdout?.once('end', () => resolve()) ?? resolve());
  const cpus = child.process.pid === undefined ? '?' : allowedCpus(child.process.pid);
  let stopped: Promise<number[]> | undefined;
  return {
    cpus,
    stop: () =>
      (stopped ??= child.stop().then(async () => {
        await ended;
        const line = printed.trim().split('\n').pop();
        if (line === undefined || line === '') throw new Error(`kafka-floor-child.ts printed no samples\n${child.output()}`);
        // Cast: the child's last line, {"samples":[…]}.
        return (JSON.parse(line) as { samples: number[] }).samples;
      })),
  };
}

function hopsOf(timings: readonly ProbeSample[], sightings: ReadonlyMap<string, Sighting>): NonNullable<PropagationResult['hops']> {
  const committed: number[] = [];
  const broker: number[] = [];
  const verifier: number[] = [];
  for (const { family, answeredAt, rejectedAt } of timings) {
    const seen = sightings.get(family);
    if (!seen) continue;
    committed.push(answeredAt - seen.recordedAt);
    broker.push(seen.seenAt - answeredAt);
    verifier.push(rejectedAt - seen.seenAt);
  }
  if (broker.length === 0) throw new Error('the bench watcher saw none of the revocations');
  return { committed: percentiles(committed), broker: percentiles(broker), verifier: percentiles(verifier), seen: broker.length };
}

/** One line: p50 / p99 of the whole and of each hop. */
export function describePropagation(result: PropagationResult): string {
  const pair = (p: Percentiles) => `${p.p50Ms} / ${p.p99Ms}`;
  const hops = result.hops
    ? `; hops p50 / p99 ms: commit→answer ${pair(result.hops.committed)}, answer→plain consumer ${pair(result.hops.broker)}, plain consumer→verifier 401 ${pair(result.hops.verifier)} (${result.hops.seen} matched)`
    : '';
  const cpus = `; CPUs prober ${result.cpus.prober}, home ${result.cpus.home}, verifier ${result.cpus.verifier}; ${result.load.pollsPerSecond} polls/s, CPU home ${result.load.homeCpuPercent}%, verifier ${result.load.verifierCpuPercent}%; waiting for a CPU home ${result.load.homeWaitPercent ?? '?'}%, verifier ${result.load.verifierWaitPercent ?? '?'}%, prober ${result.load.proberWaitPercent ?? '?'}%`;
  const floor = result.floor
    ? `; Kafka floor beside it (plain kafkajs producer → broker → consumer, ${result.parallel} in flight, CPUs ${result.floor.cpus}): p50 ${result.floor.p50Ms} ms, p90 ${result.floor.p90Ms}, p99 ${result.floor.p99Ms}, max ${result.floor.maxMs} over ${result.floor.samples}`
    : '';
  return `revocation → rejected via Kafka (${result.probe} probe, ${result.parallel} at a time): p50 ${result.p50Ms} ms, p90 ${result.p90Ms}, p99 ${result.p99Ms}, max ${result.maxMs} over ${result.samples} (target p99 ≤ ${result.targetP99Ms} ms)${hops}${floor}${cpus}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const probe = (process.env.BENCH_PROBE ?? 'keep-alive') as Probe;
  if (probe !== 'keep-alive' && probe !== 'new-connection') throw new Error(`BENCH_PROBE must be keep-alive or new-connection, got ${String(probe)}`);
  const pollMs = Number(process.env.BENCH_POLL_MS ?? 1);
  const result = await measureRevocationPropagation({ revocations: Number(process.env.BENCH_REVOCATIONS ?? 1000), parallel: propagationParallel(), probe, pollMs, hops: process.env.BENCH_HOPS !== '0', floor: process.env.BENCH_FLOOR === '1' });
  console.log(JSON.stringify(result));
  console.log(describePropagation(result));
}
