/**
 * Revocation propagation: from the moment revoke-oauth-token answers at the
 * home all-in-one to the moment a verifier fed only by Kafka rejects the token, over a real
 * broker on loopback. Run alone: `node --import tsx test/bench/revocation-propagation.ts`.
 *
 * Method: pre-issue the pairs (not measured); then, `parallel` at a time, revoke one and poll the
 * remote verifier's forward-auth with its access token every `pollMs` until it answers 401. A
 * sample is therefore an upper bound, early by at most one poll round trip (≈1 ms here). Polls
 * reuse one keep-alive connection per worker, as a reverse proxy would (BENCH_PROBE=new-connection
 * gives the earlier method: a TLS handshake per poll). With `hops`, a plain kafkajs
 * consumer in this process splits each sample at the moment the message became readable.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { canRunKafkaBroker, startKafkaBroker, type KafkaBroker } from '../../infra/kafka/kafka-broker.js';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

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
}

export type Probe = 'keep-alive' | 'new-connection';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round = (n: number) => Math.round(n * 10) / 10;

function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50Ms: round(percentile(sorted, 50)), p90Ms: round(percentile(sorted, 90)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted[sorted.length - 1]!) };
}

/** Epoch milliseconds with sub-millisecond precision, comparable to another process's Date.now(). */
const epochNow = () => performance.timeOrigin + performance.now();

/** The family id (`fid`) an access token names, read without verifying: the bench only matches messages to samples. */
function familyOf(token: string): string {
  const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid?: string };
  if (!payload.fid) throw new Error('access token without fid');
  return payload.fid;
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
 * BENCH_PROPAGATION_PARALLEL: revocations timed at once, each with its own poller. One by default:
 * each poller sends the verifier a request every millisecond, and eight of them (the default
 * before) kept the verifier and the bench's own event loop busy with 8,000 TLS requests a second,
 * which delayed the very consumer and timestamps being measured (docs/benchmarks.md,
 * "Revocation propagation").
 */
export function propagationParallel(): number {
  const parallel = Number(process.env.BENCH_PROPAGATION_PARALLEL ?? defaultParallel);
  if (!Number.isInteger(parallel) || parallel < 1) throw new Error(`BENCH_PROPAGATION_PARALLEL must be a whole number ≥ 1, got ${process.env.BENCH_PROPAGATION_PARALLEL}`);
  return parallel;
}
const defaultParallel = 1;

export async function measureRevocationPropagation(
  options: { revocations?: number; warmup?: number; parallel?: number; pollMs?: number; probe?: Probe; hops?: boolean } = {},
): Promise<PropagationResult> {
  const revocations = options.revocations ?? 1000;
  const parallel = options.parallel ?? defaultParallel;
  const warmup = options.warmup ?? 100;
  const pollMs = options.pollMs ?? 1;
  const probe = options.probe ?? 'keep-alive';
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
  let agent: Agent | undefined;
  try {
    home = await startTessera({ TESSERA_KAFKA_BROKERS: brokers, TESSERA_KAFKA_TOPIC: topic, TESSERA_LOG_LEVEL: 'warn' });
    remote = await startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers,
        TESSERA_KAFKA_TOPIC: topic,
        TESSERA_VERIFIER_SOURCE: 'kafka',
        TESSERA_ISSUER_JWKS_URL: `${home.baseUrl}/.well-known/jwks.json`,
        NODE_EXTRA_CA_CERTS: join(home.dataDir, 'tls', 'self-signed.crt'),
        TESSERA_LOG_LEVEL: 'warn',
      },
      { command: 'verifier' },
    );
    const account = await home.createAccount();
    const pairs: { token: string; refresh_token: string }[] = [];
    // The first `warmup` revocations go through the whole path untimed (JIT of three processes and the broker).
    for (let i = 0; i < revocations + warmup; i += 1) {
      const answer = await home.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
      pairs.push(answer.json() as { token: string; refresh_token: string });
    }
    // Every token must be accepted remotely before its revocation is timed.
    const remoteUrl = new URL('/forward-auth?authenticated=true', remote.baseUrl);
    // A reverse proxy keeps its connections to the verifier open; a TLS handshake per poll would
    // load the verifier (and this process) with work no deployment does, on every millisecond.
    agent = new Agent({ keepAlive: true, maxSockets: parallel, ca: readFileSync(join(remote.dataDir, 'tls', 'self-signed.crt')) });
    const keptAlive = agent;
    const check =
      probe === 'new-connection'
        ? (token: string) => remote!.request('/forward-auth?authenticated=true', { headers: { authorization: `Bearer ${token}` } })
        : (token: string) =>
            new Promise<{ status: number }>((resolve, reject) => {
              const outgoing = request(remoteUrl, { agent: keptAlive, headers: { authorization: `Bearer ${token}` } }, (incoming) => {
                incoming.resume();
                incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0 }));
                incoming.on('error', reject);
              });
              outgoing.on('error', reject);
              outgoing.end();
            });
    if (options.hops) watch = await watchTopic(brokers, topic);
    if ((await check(pairs[0]!.token)).status !== 200) throw new Error('the remote verifier does not accept tokens from home');

    const latencies: number[] = [];
    const timings: { family: string; answeredAt: number; rejectedAt: number }[] = [];
    let next = 0;
    let timed = -warmup;
    const worker = async () => {
      for (;;) {
        const pair = pairs[next++];
        if (!pair) return;
        const revoked = await home!.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token });
        if (revoked.status !== 200) throw new Error(`revoke answered ${revoked.status}`);
        const answeredAt = epochNow();
        const deadline = answeredAt + 10_000;
        while ((await check(pair.token)).status !== 401) {
          if (epochNow() > deadline) throw new Error('a revocation did not reach the remote verifier within 10 s');
          await sleep(pollMs);
        }
        const rejectedAt = epochNow();
        if ((timed += 1) <= 0) continue;
        latencies.push(rejectedAt - answeredAt);
        timings.push({ family: familyOf(pair.token), answeredAt, rejectedAt });
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
    return { samples: latencies.length, ...percentiles(latencies), targetP99Ms: 25, probe, parallel, ...(watch ? { hops: hopsOf(timings, watch.sightings) } : {}) };
  } finally {
    await watch?.stop();
    agent?.destroy();
    await remote?.stop();
    await home?.stop();
    await broker?.destroy();
  }
}

function hopsOf(timings: readonly { family: string; answeredAt: number; rejectedAt: number }[], sightings: ReadonlyMap<string, Sighting>): NonNullable<PropagationResult['hops']> {
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
  return `revocation → rejected via Kafka (${result.probe} probe, ${result.parallel} at a time): p50 ${result.p50Ms} ms, p90 ${result.p90Ms}, p99 ${result.p99Ms}, max ${result.maxMs} over ${result.samples} (target p99 ≤ ${result.targetP99Ms} ms)${hops}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const probe = (process.env.BENCH_PROBE ?? 'keep-alive') as Probe;
  if (probe !== 'keep-alive' && probe !== 'new-connection') throw new Error(`BENCH_PROBE must be keep-alive or new-connection, got ${String(probe)}`);
  const result = await measureRevocationPropagation({ revocations: Number(process.env.BENCH_REVOCATIONS ?? 1000), parallel: propagationParallel(), probe, hops: process.env.BENCH_HOPS !== '0' });
  console.log(JSON.stringify(result));
  console.log(describePropagation(result));
}
