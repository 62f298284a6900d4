import { TesseraClient, type FetchLike } from '@tessera/client';
import type { Credentials } from '../support/tessera-process.js';
import type { Answer, KeepAliveClient } from './keep-alive-client.js';
import type { RegionName, Topology } from './topology.js';

/** One printed figure. */
export interface Figure {
  readonly scenario: string;
  readonly measure: string;
  readonly value: string;
}

export class ScenarioFailed extends Error {
  override readonly name = 'ScenarioFailed';
}

export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new ScenarioFailed(message);
}

export interface SimSettings {
  readonly revocations: number;
  /** Revocations timed at once. Each is polled every 2 ms: at 8 at a time the probe's own 4,000 requests/s load the 2 cores it measures. */
  readonly revocationParallel: number;
  /**
   * Each timed revocation starts after a random pause of a third of this to all of it (ms), so
   * that revocations are isolated, as most are. Back to back, each would start just after b saw
   * the previous one, while MM2's next fetch is still on its way to a, and wait for it: a whole
   * extra round trip. That case is measured apart, after.
   */
  readonly revocationGapMs: number;
  readonly latencyMs: number;
  readonly partitionSeconds: number;
  readonly partitionRevocations: number;
  readonly restartRevocations: number;
  readonly credentials: number;
}

interface Pair {
  readonly token: string;
  readonly refresh_token: string;
}

const GET_TOKEN = '/v5/Authorization/get-oauth-token';
const REFRESH = '/v5/Authorization/refresh-oauth-token';
const REVOKE = '/v5/Authorization/revoke-oauth-token';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};
const ms = (value: number) => `${value.toFixed(1)} ms`;
const fidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string }).fid;

/** A bearer check at a region: forward-auth, the route a proxy in front of a downstream service calls. */
const verify = (http: KeepAliveClient, token: string) =>
  http.send('/forward-auth?permission=transaction:charge', { headers: { authorization: `Bearer ${token}` } }).then((answer) => answer.status);

/** Polls until `probe` gives `want`, every `everyMs`; the time it took, or a failure after `timeoutMs`. */
async function until<T>(probe: () => Promise<T>, want: T, what: string, timeoutMs: number, everyMs = 5): Promise<number> {
  const started = performance.now();
  for (;;) {
    if ((await probe()) === want) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new ScenarioFailed(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

async function inBatches<T, R>(items: readonly T[], width: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await run(items[index]!);
      }
    }),
  );
  return results;
}

export function scenarios(topology: Topology, account: Credentials, settings: SimSettings) {
  const { a, b } = topology;
  const regions = { a, b };
  const issue = async (region: RegionName): Promise<Pair> => {
    const answer = await regions[region].http.postJson(GET_TOKEN, { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    check(answer.status === 200, `get-oauth-token in ${region} answered ${answer.status}: ${answer.text}`);
    return answer.json<Pair>();
  };
  /** Pairs issued in a that b already accepts: a's key is known in b, so a later 401 can only be the revocation. */
  const acceptedInB = async (count: number): Promise<Pair[]> => {
    const pairs = await inBatches(Array.from({ length: count }), 8, () => issue('a'));
    await inBatches(pairs, 8, (pair) => until(() => verify(b.http, pair.token), 200, 'an a-issued token accepted in b', 15_000, 10));
    return pairs;
  };

  return {
    /** A credential created in a (the control region): how long until get-oauth-token works in b. */
    async credentialPropagation(label: string): Promise<Figure[]> {
      const times: number[] = [];
      let source = 2;
      for (let i = 0; i < settings.credentials; i++) {
        const created = await a.server.createAccount({ name: `sim-${label}-${i}` });
        // Each poll from its own loopback address: the per-address failure budget is not what is measured here.
        const took = await until(
          async () => (await b.http.postJson(GET_TOKEN, { api_login_id: created.api_login_id, transaction_key: created.transaction_key }, `127.0.0.${(source = (source % 250) + 2)}`)).status,
          200,
          `credential ${i} created in a usable in b`,
          20_000,
          10,
        );
        times.push(took);
      }
      return [{ scenario: `credential created in a → usable in b (${label})`, measure: `p50 / max of ${times.length}`, value: `${ms(percentile(times, 50))} / ${ms(Math.max(...times))}` }];
    },

    /**
     * Revoke in a; time from the revoke answer until b's verifier answers 401. Isolated
     * revocations first (the figure the cross-region target in docs/multi-region.md is about), then back to back.
     */
    async revocationAcrossRegions(label: string): Promise<Figure[]> {
      const timed = async (count: number, gapMs: number) => {
        const warmUp = Math.min(20, count);
        const pairs = await acceptedInB(count + warmUp);
        const all = await inBatches(pairs, settings.revocationParallel, async (pair) => {
          if (gapMs > 0) await sleep((gapMs * (1 + 2 * Math.random())) / 3);
          const revoked = await a.http.postJson(REVOKE, { refresh_token: pair.refresh_token });
          check(revoked.status === 200, `revoke in a answered ${revoked.status}`);
          check((await verify(a.http, pair.token)) === 401, 'a token revoked in a is refused in a at once');
          return until(() => verify(b.http, pair.token), 401, 'a revocation made in a refused in b', 20_000, 2);
        });
        // The first few warm the path (TLS sessions, JIT, MM2's first fetch of a quiet topic): not timed.
        const times = all.slice(warmUp);
        return `${ms(percentile(times, 50))} / ${ms(percentile(times, 99))} / ${ms(Math.max(...times))}`;
      };
      const gap = settings.revocationGapMs;
      const isolated = await timed(settings.revocations, gap);
      const backToBack = await timed(Math.max(1, Math.round(settings.revocations / 4)), 0);
      const scenario = `revocation a → 401 in b (${label})`;
      const at = `${settings.revocationParallel} at a time`;
      return [
        { scenario, measure: `p50 / p99 / max of ${settings.revocations}, ${at}, ${Math.round(gap / 3)}–${gap} ms apart`, value: isolated },
        { scenario, measure: `p50 / p99 / max of ${Math.max(1, Math.round(settings.revocations / 4))}, ${at}, back to back`, value: backToBack },
      ];
    },

    /** 16 concurrent refreshes of one a-homed token over both regions: one wins; the old token dies in both. */
    async roamingClient(label: string): Promise<Figure[]> {
      const rounds = 5;
      for (let round = 0; round < rounds; round++) {
        const pair = await issue('a');
        const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? a : b).http.postJson(REFRESH, { refresh_token: pair.refresh_token })));
        const statuses = answers.map((answer) => answer.status);
        check(statuses.filter((status) => status === 200).length === 1, `round ${round}: exactly one of 16 refreshes wins (got ${statuses.join(',')})`);
        check(statuses.filter((status) => status === 401).length === 15, `round ${round}: the other 15 are refused with 401 (got ${statuses.join(',')})`);
        const winner = answers.find((answer) => answer.status === 200)!.json<Pair>();
        check(fidOf(winner.token) === fidOf(pair.token), 'the refreshed pair stays in its family');
        check((await verify(a.http, pair.token)) === 401, 'the old access token is refused in a at once');
        await until(() => verify(b.http, pair.token), 401, 'the old access token refused in b', 15_000);
        await until(() => verify(b.http, winner.token), 200, 'the new access token accepted in b', 15_000);
      }
      // Forwarding's cost: sequential refreshes of one family at home, then the same through b.
      const samples = 30;
      const timed = async (via: KeepAliveClient, count: number) => {
        let current = await issue('a');
        const times: number[] = [];
        for (let i = 0; i < count; i++) {
          const started = performance.now();
          const answer = await via.postJson(REFRESH, { refresh_token: current.refresh_token });
          times.push(performance.now() - started);
          check(answer.status === 200, `refresh answered ${answer.status}`);
          current = answer.json<Pair>();
        }
        return times;
      };
      await timed(b.http, 3); // warm the peer link's connection
      const home = await timed(a.http, samples);
      const forwarded = await timed(b.http, samples);
      return [
        { scenario: `roaming client (${label})`, measure: `16 concurrent refreshes over a and b, ${rounds} rounds`, value: `1 × 200 and 15 × 401 each round; old token 401 in both` },
        {
          scenario: `refresh forwarded b → a (${label})`,
          measure: `extra latency, median of ${samples} (home / forwarded)`,
          value: `+${ms(percentile(forwarded, 50) - percentile(home, 50))} (${ms(percentile(home, 50))} / ${ms(percentile(forwarded, 50))})`,
        },
      ];
    },

    /** Every inter-region link down for a while: b carries on alone; a's revocations arrive after the heal. */
    async partition(): Promise<Figure[]> {
      const revokedDuringPartition = await acceptedInB(settings.partitionRevocations);
      const ownInB = await issue('b');
      const homedInA = await issue('a');
      // The SDK, as a client GeoDNS moves from a to b: same URL, another region behind it.
      let behind: KeepAliveClient = a.http;
      const geoFetch: FetchLike = async (input, init) => {
        const url = new URL(String(input));
        const answer: Answer = await behind.send(url.pathname + url.search, {
          method: init?.method ?? 'GET',
          headers: Object.fromEntries(new Headers(init?.headers).entries()),
          ...(typeof init?.body === 'string' ? { body: init.body } : {}),
        });
        const headers = new Headers();
        for (const [name, value] of Object.entries(answer.headers)) if (typeof value === 'string') headers.set(name, value);
        return new Response(answer.text, { status: answer.status, headers });
      };
      let clockOffsetMs = 0;
      const client = new TesseraClient({
        baseUrl: 'https://tessera.sim.invalid/',
        apiLoginId: account.api_login_id,
        transactionKey: account.transaction_key,
        fetch: geoFetch,
        clock: () => Date.now() + clockOffsetMs,
      });
      const beforePartition = await client.getAccessToken();
      check(fidOf(beforePartition).startsWith('a_'), 'the SDK\'s first pair is homed in a');

      await topology.partition();
      const partitionedAt = performance.now();
      const figures: Figure[] = [];
      try {
        check((await verify(b.http, ownInB.token)) === 200, 'b verifies its own tokens during the partition');
        check((await verify(b.http, homedInA.token)) === 200, 'b verifies a\'s tokens during the partition (offline)');
        const fresh = await issue('b');
        check(fidOf(fresh.token).startsWith('b_'), 'b issues new families during the partition');
        const ownRefresh = await b.http.postJson(REFRESH, { refresh_token: ownInB.refresh_token });
        check(ownRefresh.status === 200, `b refreshes its own families during the partition (got ${ownRefresh.status})`);
        const foreignStarted = performance.now();
        const foreign = await b.http.postJson(REFRESH, { refresh_token: homedInA.refresh_token });
        const foreignMs = performance.now() - foreignStarted;
        check(foreign.status === 503, `a refresh of an a-homed family in b answers 503 during the partition (got ${foreign.status})`);
        check(typeof foreign.headers['retry-after'] === 'string', 'the 503 carries Retry-After');
        check(String(foreign.headers['content-type']).startsWith('application/problem+json'), 'the 503 is problem+json');

        behind = b.http;
        clockOffsetMs = 3600 * 1000;
        const afterFallback = await client.getAccessToken();
        check(fidOf(afterFallback).startsWith('b_'), 'the SDK fell back to its credentials in b: a new family homed in b');
        const charged = await client.fetch('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        check(charged.status === 200, `the SDK carries on in b (charge answered ${charged.status})`);

        for (const pair of revokedDuringPartition) {
          const revoked = await a.http.postJson(REVOKE, { refresh_token: pair.refresh_token });
          check(revoked.status === 200, `revoke in a during the partition answered ${revoked.status}`);
        }
        const stillAccepted = (await inBatches(revokedDuringPartition, 8, (pair) => verify(b.http, pair.token))).filter((status) => status === 200).length;
        const remaining = settings.partitionSeconds * 1000 - (performance.now() - partitionedAt);
        if (remaining > 0) await sleep(remaining);
        figures.push(
          { scenario: `partition ${settings.partitionSeconds} s`, measure: 'in b: verify, issue, refresh own', value: '200, 200, 200' },
          { scenario: `partition ${settings.partitionSeconds} s`, measure: 'in b: refresh of an a-homed family', value: `503, Retry-After ${String(foreign.headers['retry-after'])} s, in ${ms(foreignMs)}` },
          { scenario: `partition ${settings.partitionSeconds} s`, measure: 'SDK in b', value: 'refresh 503 → get-oauth-token 200 → charge 200' },
          { scenario: `partition ${settings.partitionSeconds} s`, measure: 'revocations made in a, still accepted in b before the heal', value: `${stillAccepted} of ${revokedDuringPartition.length}` },
        );
      } finally {
        await topology.heal();
      }
      const healedAt = performance.now();
      const delivered = await inBatches(revokedDuringPartition, 8, (pair) => until(() => verify(b.http, pair.token), 401, 'a revocation from the partition refused in b after the heal', 60_000, 20).then(() => 1));
      const deliveredMs = performance.now() - healedAt;
      const count = delivered.reduce((sum, one) => sum + one, 0);
      check(count === revokedDuringPartition.length, `every revocation made during the partition takes effect in b (${count} of ${revokedDuringPartition.length})`);
      const againForwarded = await b.http.postJson(REFRESH, { refresh_token: homedInA.refresh_token });
      check(againForwarded.status === 200, `after the heal, b forwards a's refreshes again (got ${againForwarded.status})`);
      await client.close();
      figures.push({ scenario: `partition ${settings.partitionSeconds} s`, measure: 'revocations made in a during it, in effect in b after the heal', value: `${count} of ${revokedDuringPartition.length}, all within ${ms(deliveredMs)} of the heal` });
      return figures;
    },

    /** MirrorMaker 2 into b killed (SIGKILL) while a revokes, then started again; then b's broker restarted. */
    async mirrorAndBrokerRestarts(): Promise<Figure[]> {
      const figures: Figure[] = [];
      for (const fault of ['mirror-maker', 'broker'] as const) {
        const pairs = await acceptedInB(settings.restartRevocations);
        const duplicatesBefore = await b.mirroredDuplicates();
        if (fault === 'mirror-maker') await topology.killMirrorMaker('b');
        else await topology.stopBroker('b');
        for (const pair of pairs) {
          const revoked = await a.http.postJson(REVOKE, { refresh_token: pair.refresh_token });
          check(revoked.status === 200, `revoke in a answered ${revoked.status}`);
        }
        const restartedAt = performance.now();
        if (fault === 'mirror-maker') await topology.startMirrorMaker('b');
        else await topology.startBroker('b');
        await inBatches(pairs, 8, (pair) => until(() => verify(b.http, pair.token), 401, `a revocation made while the ${fault} was down refused in b`, 90_000, 20));
        const tookMs = performance.now() - restartedAt;
        const duplicates = (await b.mirroredDuplicates()) - duplicatesBefore;
        figures.push({
          scenario: fault === 'mirror-maker' ? 'MirrorMaker 2 into b killed (SIGKILL) and restarted' : 'b\'s Kafka broker stopped and restarted',
          measure: 'revocations made meanwhile, in effect in b / duplicates dropped',
          value: `${pairs.length} of ${pairs.length}, within ${ms(tookMs)} of the restart / ${duplicates}`,
        });
      }
      return figures;
    },
  };
}
