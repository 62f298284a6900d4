/**
 * Revocation propagation (issue 4, point 6): from the moment revoke-oauth-token answers at the
 * home all-in-one to the moment a verifier fed only by Kafka rejects the token, over a real
 * broker on loopback. Run alone: `node --import tsx test/bench/revocation-propagation.ts`.
 *
 * Method: pre-issue the pairs (not measured); then, `parallel` at a time, revoke one and poll the
 * remote verifier's forward-auth with its access token every `pollMs` until it answers 401. A
 * sample is therefore an upper bound, early by at most one poll round trip (≈1 ms here).
 */
import { join } from 'node:path';
import { canRunKafkaBroker, startKafkaBroker, type KafkaBroker } from '../../infra/kafka/kafka-broker.js';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

export interface PropagationResult {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly targetP99Ms: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function measureRevocationPropagation(options: { revocations?: number; parallel?: number; pollMs?: number } = {}): Promise<PropagationResult> {
  const revocations = options.revocations ?? 1000;
  const parallel = options.parallel ?? 8;
  const pollMs = options.pollMs ?? 1;
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
    for (let i = 0; i < revocations; i += 1) {
      const answer = await home.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
      pairs.push(answer.json() as { token: string; refresh_token: string });
    }
    // Every token must be accepted remotely before its revocation is timed.
    const check = (token: string) => remote!.request('/forward-auth?authenticated=true', { headers: { authorization: `Bearer ${token}` } });
    if ((await check(pairs[0]!.token)).status !== 200) throw new Error('the remote verifier does not accept tokens from home');

    const latencies: number[] = [];
    let next = 0;
    const worker = async () => {
      for (;;) {
        const pair = pairs[next++];
        if (!pair) return;
        const revoked = await home!.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token });
        if (revoked.status !== 200) throw new Error(`revoke answered ${revoked.status}`);
        const answeredAt = performance.now();
        const deadline = answeredAt + 10_000;
        while ((await check(pair.token)).status !== 401) {
          if (performance.now() > deadline) throw new Error('a revocation did not reach the remote verifier within 10 s');
          await sleep(pollMs);
        }
        latencies.push(performance.now() - answeredAt);
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
    const sorted = [...latencies].sort((a, b) => a - b);
    const round = (n: number) => Math.round(n * 10) / 10;
    return {
      samples: sorted.length,
      p50Ms: round(percentile(sorted, 50)),
      p90Ms: round(percentile(sorted, 90)),
      p99Ms: round(percentile(sorted, 99)),
      maxMs: round(sorted[sorted.length - 1]!),
      targetP99Ms: 100,
    };
  } finally {
    await remote?.stop();
    await home?.stop();
    await broker?.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureRevocationPropagation({ revocations: Number(process.env.BENCH_REVOCATIONS ?? 1000) });
  console.log(JSON.stringify(result));
  console.log(`revocation → rejected via Kafka: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms over ${result.samples} (target p99 ≤ ${result.targetP99Ms} ms)`);
}
