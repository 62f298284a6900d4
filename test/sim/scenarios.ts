import { TesseraClient, type FetchLike } from '@tessera/client';
import { createKafkaFeed, startRevocationConsumer } from '@tessera/revocations';
import { silentLogger } from '@tessera/feed';
import type { Credentials } from '../support/tessera-process.js';
import type { RecordingClient } from './history.js';
import type { Answer } from './keep-alive-client.js';
import { GET_TOKEN, REFRESH, REVOKE, check, check401, claimsOf, fidOf, inBatches, ms, percentile, sleep, until, type Figure, type Pair, type SimContext } from './sim-helpers.js';
import { simClients } from './sim-clients.js';
import type { Topology } from './topology.js';

export { ScenarioFailed, check, type Figure, type SimContext } from './sim-helpers.js';

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
  /** Revokes of a-homed families made in b while a is cut off or lost, timed one at a time. */
  readonly remoteRevocations: number;
}

const verify = (http: RecordingClient, token: string) => check401(http, token).then((answer) => answer.status);

export function scenarios(topology: Topology, account: Credentials, settings: SimSettings, context: SimContext) {
  const { recorder, random } = context;
  const clients = simClients(topology, account, context);
  const { a, b, issue, untilRevokedIn, acceptedInB, checkableInB, untilMarked, revokeInB, forgedFor } = clients;

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
          if (gapMs > 0) await sleep((gapMs * (1 + 2 * random.next())) / 3);
          const revoked = await a.http.postJson(REVOKE, { refresh_token: pair.refresh_token });
          check(revoked.status === 200, `revoke in a answered ${revoked.status}`);
          const atHome = await check401(a.http, pair.token);
          check(atHome.status === 401, 'a token revoked in a is refused in a at once');
          recorder.applied('a', pair.token, atHome.calledAt, atHome.returnedAt);
          return untilRevokedIn(b.http, pair.token, 'a revocation made in a refused in b', 20_000, 2);
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
      const timed = async (via: RecordingClient, count: number) => {
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
      let behind: RecordingClient = a.http;
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

      // Revoke from anywhere: a-homed families b can check, revoked in b during the cut, and a few that race a refresh at home.
      const revokedInB = await checkableInB(settings.remoteRevocations + 1);
      const raced = await checkableInB(5);
      const racedNext: Pair[] = [];
      const remoteTimes: number[] = [];
      // Before the cut, a link that answers nothing: the first revoke waits out TESSERA_PEER_REVOKE_TIMEOUT, and the detector marks a at once.
      const [blackholed] = await checkableInB(1);
      await topology.blackhole('issuer-a', true);
      const blackholeStarted = performance.now();
      await revokeInB(blackholed!);
      const blackholeMs = performance.now() - blackholeStarted;
      const markedByTimeout = (await topology.b.metric('tessera_peer_reachable{region="a"}')) === 0;
      await topology.blackhole('issuer-a', false);
      const reachableAgainMs = await untilMarked(1, performance.now(), 15_000);

      await topology.partition();
      const partitionedAt = performance.now();
      const isolatedFrom = recorder.now();
      const figures: Figure[] = [];
      try {
        // Revoke from anywhere: the first revoke in b right after the cut, before the detector has marked a.
        const firstTook = await revokeInB(revokedInB[0]!);
        const markedMs = await untilMarked(0, partitionedAt, 15_000);
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

        // What b cannot prove is 503, never a false 200: a forged secret of a live family, a family b never heard of.
        for (const pair of raced) {
          const forged = await b.http.postJson(REVOKE, { refresh_token: forgedFor(pair) });
          check(forged.status === 503 && typeof forged.headers['retry-after'] === 'string', `a forged token of a live a-homed family revoked in b answered ${forged.status}, want 503 with Retry-After`);
        }
        // What b can prove dead it refuses as home would: any token of a family revoked in b.
        const ofRevoked = await b.http.postJson(REVOKE, { refresh_token: forgedFor(revokedInB[0]!) });
        check(ofRevoked.status === 401, `a forged token of a family b revoked answered ${ofRevoked.status}, want 401`);
        const unknown = await b.http.postJson(REVOKE, { refresh_token: `tsr_a_${random.text(22)}.${random.text(43)}` });
        check(unknown.status === 503, `a revoke in b of a family b has never heard of answered ${unknown.status}, want 503`);
        // The race the partition allows: a refresh wins at home while b revokes the token it replaced.
        for (const [i, pair] of raced.entries()) {
          const refreshed = await a.http.postJson(REFRESH, { refresh_token: pair.refresh_token });
          check(refreshed.status === 200, `a refresh at home during the partition answered ${refreshed.status}`);
          racedNext[i] = refreshed.json<Pair>();
          await revokeInB(pair);
        }
        const stillAccepted = (await inBatches(revokedDuringPartition, 8, (pair) => verify(b.http, pair.token))).filter((status) => status === 200).length;
        // b records revokes of a's families itself, timed one at a time once what the steps above
        // set off (a's relay, MirrorMaker 2 losing its links) has settled: the revoke's own cost.
        await sleep(3_000);
        const times = await context.quietly(async () => {
          const taken: number[] = [];
          for (const pair of revokedInB.slice(1)) {
            await sleep(random.between(10, 40));
            taken.push(await revokeInB(pair));
          }
          return taken;
        });
        figures.push(
          { scenario: `revoke from anywhere, a cut off (${settings.partitionSeconds} s partition)`, measure: 'b marks a unreachable (failure detector), from the cut', value: ms(markedMs) },
          { scenario: `revoke from anywhere, a cut off (${settings.partitionSeconds} s partition)`, measure: 'first revoke in b after the cut (refused connection)', value: `200 in ${ms(firstTook)}` },
          {
            scenario: `revoke from anywhere, a cut off (${settings.partitionSeconds} s partition)`,
            measure: `revoke in b once marked: p50 / p99 / max of ${times.length}, one at a time (workload paused)`,
            value: `${ms(percentile(times, 50))} / ${ms(percentile(times, 99))} / ${ms(Math.max(...times))}; each token 401 in b at the next request`,
          },
          { scenario: `revoke from anywhere, a cut off (${settings.partitionSeconds} s partition)`, measure: 'in b: forged token of a live family, of a revoked one; unknown family', value: '503 + Retry-After, 401; 503' },
        );
        remoteTimes.push(...times);
        const remaining = settings.partitionSeconds * 1000 - (performance.now() - partitionedAt);
        if (remaining > 0) await sleep(remaining);
        figures.push(
          { scenario: `partition ${settings.partitionSeconds} s`, measure: 'in b: verify, issue, refresh own', value: '200, 200, 200' },
          { scenario: `partition ${settings.partitionSeconds} s`, measure: 'in b: refresh of an a-homed family', value: `503, Retry-After ${String(foreign.headers['retry-after'])} s, in ${ms(foreignMs)}` },
          { scenario: `partition ${settings.partitionSeconds} s`, measure: 'SDK in b', value: 'refresh 503 → get-oauth-token 200 → charge 200' },
          { scenario: `partition ${settings.partitionSeconds} s`, measure: 'revocations made in a, still accepted in b before the heal', value: `${stillAccepted} of ${revokedDuringPartition.length}` },
        );
      } finally {
        const isolatedTo = recorder.now();
        recorder.isolated('a', isolatedFrom, isolatedTo);
        recorder.isolated('b', isolatedFrom, isolatedTo);
        await topology.heal();
      }
      const healedAt = performance.now();
      // a applies what b recorded: the tokens die in a, refreshes of their families are refused there,
      // even of the pair a refresh won at home during the cut.
      const refusedInA = await inBatches([...revokedInB, ...raced], 8, async (pair) => {
        await untilRevokedIn(a.http, pair.token, 'a revocation recorded in b refused in a after the heal', 60_000, 5);
        return performance.now() - healedAt;
      });
      for (const pair of [...revokedInB.slice(0, 20), ...racedNext]) {
        const refresh = await a.http.postJson(REFRESH, { refresh_token: pair.refresh_token });
        check(refresh.status === 401, `after the heal, a refresh at home of a family revoked in b answered ${refresh.status}, want 401`);
      }
      for (const pair of racedNext) await untilRevokedIn(a.http, pair.token, 'the pair a refresh won at home, refused once b\'s revocation arrived', 60_000, 5);
      // And a's downstream consumers learn it like a local revocation: a records it in the family's
      // own stream, its relay puts it on a's tessera.revocations, and @tessera/revocations applies it.
      const feed = createKafkaFeed({ ...topology.kafkaClient('a'), logger: silentLogger });
      const downstream = await startRevocationConsumer({ feed, logger: silentLogger });
      const seenDownstream = await until(
        async () => {
          await downstream.ready;
          return [...revokedInB, ...raced, ...racedNext].every((pair) => downstream.isRejected(fidOf(pair.token), claimsOf(pair.token).gen));
        },
        true,
        'a downstream consumer of a\'s tessera.revocations (@tessera/revocations) refusing every token revoked in b',
        30_000,
        100,
      ).finally(async () => {
        await downstream.close();
        await feed.close();
      });
      figures.push(
        {
          scenario: `revoke from anywhere, a cut off (${settings.partitionSeconds} s partition)`,
          measure: `from the heal until a refuses each of the ${refusedInA.length} tokens revoked in b: p50 / max`,
          value: `${ms(percentile(refusedInA, 50))} / ${ms(Math.max(...refusedInA))}; every refresh of them at a 401; on a's tessera.revocations for its downstream consumers (@tessera/revocations refusing them ${ms(seenDownstream)} after it started)`,
        },
        { scenario: 'revoke from anywhere, a blackholed link (no answer)', measure: 'first revoke in b: waits TESSERA_PEER_REVOKE_TIMEOUT (1 s), then decided in b', value: `200 in ${ms(blackholeMs)}; a marked at once: ${markedByTimeout ? 'yes' : 'no'}; reachable again ${ms(reachableAgainMs)} after the link returned` },
      );
      check(markedByTimeout, 'a forward that waited its whole budget marks the home region unreachable at once');
      check(percentile(remoteTimes, 99) <= 50, `revoke in b while a is cut off: p99 ${ms(percentile(remoteTimes, 99))}, target ≤ 50 ms`);
      const delivered = await inBatches(revokedDuringPartition, 8, (pair) => untilRevokedIn(b.http, pair.token, 'a revocation from the partition refused in b after the heal', 60_000, 20).then(() => 1));
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
        await inBatches(pairs, 8, (pair) => untilRevokedIn(b.http, pair.token, `a revocation made while the ${fault} was down refused in b`, 90_000, 20));
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
