import type { Credentials } from '../support/tessera-process.js';
import { recordingClient, type HistoryRecorder, type RecordingClient, type TimedAnswer } from './history.js';
import { keepAliveClient } from './keep-alive-client.js';
import { showsRevocationApplied, type RefreshesSeen } from './revocation-shown.js';
import type { SeededRandom } from './seeded-random.js';

/**
 * Clients that keep asking both regions for everything, at random, while the scenarios inject
 * latency, a partition, a region's loss and broker and MirrorMaker 2 faults: the bulk of the
 * history the linearizability checker reads. They share a pool of families, so refreshes race
 * each other, revokes race refreshes, and tokens are presented old, current, forged, at home and
 * away. Every exchange is recorded; a probe's first 401 on a revoked family's newest token is
 * recorded as the revocation applied in that region.
 */
export interface WorkloadOptions {
  readonly origins: Readonly<Record<string, string>>;
  readonly ca: Buffer;
  readonly account: Credentials;
  readonly recorder: HistoryRecorder;
  readonly random: SeededRandom;
  readonly clients: number;
  /** Each client's pause between two requests, ms: [low, high]. */
  readonly pauseMs: readonly [number, number];
  /** Loopback addresses to send from (one kept-alive connection pool each): the servers' failure budgets count by address. */
  readonly addresses: readonly string[];
}

interface Pair {
  readonly generation: number;
  readonly token: string;
  readonly refreshToken: string;
}

interface PoolFamily {
  readonly id: string;
  readonly home: string;
  readonly pairs: Pair[];
  /** A revoke of it was answered 200, or may have committed (no answer, 5xx). */
  revokeSent: boolean;
  /** A refresh of its newest known token may have committed unseen: a later 401 may be a rotation, not a revocation. */
  rotatedUnseen: boolean;
  /** Its refreshes sent and not yet answered, and sent so far: one in flight may rotate it unseen. */
  refreshes: { inFlight: number; started: number };
}

export interface Workload {
  /** Clients wait before their next request until resume(). */
  pause(): Promise<void>;
  resume(): void;
  stop(): Promise<{ readonly requests: number }>;
}

const GET_TOKEN = '/v5/Authorization/get-oauth-token';
const REFRESH = '/v5/Authorization/refresh-oauth-token';
const REVOKE = '/v5/Authorization/revoke-oauth-token';
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string; gen: number };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function startWorkload(options: WorkloadOptions): Workload {
  const { random, recorder } = options;
  const regions = Object.keys(options.origins);
  const pool: PoolFamily[] = [];
  const maxPool = 40;
  let requests = 0;
  let stopping = false;
  let paused: { promise: Promise<void>; resume: () => void } | undefined;
  let inFlight = 0;
  let idle: (() => void) | undefined;

  const connections = regions.flatMap((region) => options.addresses.map((address) => ({ region, address, http: keepAliveClient(options.origins[region]!, options.ca, 2, address) })));
  /** A request from a random address of the pool, recorded as `client`'s. */
  const via = (client: number, region: string): RecordingClient => recordingClient(random.pick(connections.filter((c) => c.region === region)).http, region, recorder, client);

  const newest = (family: PoolFamily) => family.pairs[family.pairs.length - 1]!;
  const presented = (family: PoolFamily) => (random.chance(0.8) ? newest(family) : random.pick(family.pairs));
  const somewhere = (family: PoolFamily) => (random.chance(0.5) ? family.home : random.pick(regions));
  const settled = (answer: TimedAnswer | undefined) => answer === undefined || answer.status === 0 || answer.status >= 500;

  async function step(client: number): Promise<void> {
    const roll = random.next();
    if (pool.length < 4 || roll < 0.08) {
      const region = random.pick(regions);
      const answer = await via(client, region).postJson(GET_TOKEN, { api_login_id: options.account.api_login_id, transaction_key: options.account.transaction_key });
      if (answer.status !== 200) return;
      const pair = answer.json<{ token: string; refresh_token: string }>();
      pool.push({ id: claimsOf(pair.token).fid, home: region, pairs: [{ generation: 0, token: pair.token, refreshToken: pair.refresh_token }], revokeSent: false, rotatedUnseen: false, refreshes: { inFlight: 0, started: 0 } });
      if (pool.length > maxPool) pool.splice(random.between(0, pool.length - 2), 1);
      return;
    }
    const family = random.pick(pool);
    if (roll < 0.36) {
      const pair = presented(family);
      family.refreshes.inFlight += 1;
      family.refreshes.started += 1;
      const answer = await via(client, somewhere(family)).postJson(REFRESH, { refresh_token: pair.refreshToken }).catch(() => undefined);
      family.refreshes.inFlight -= 1;
      if (answer?.status === 200) {
        const next = answer.json<{ token: string; refresh_token: string }>();
        const generation = claimsOf(next.token).gen;
        if (generation > newest(family).generation) family.pairs.push({ generation, token: next.token, refreshToken: next.refresh_token });
      } else if (settled(answer) && pair === newest(family)) {
        family.rotatedUnseen = true;
      }
      return;
    }
    if (roll < 0.48) {
      const answer = await via(client, somewhere(family)).postJson(REVOKE, { refresh_token: presented(family).refreshToken }).catch(() => undefined);
      if (answer?.status === 200 || settled(answer)) family.revokeSent = true;
      return;
    }
    if (roll < 0.56) {
      // A token naming the family with a secret it never issued.
      const forged = `tsr_${family.id}.${random.text(43)}`;
      await via(client, somewhere(family)).postJson(random.chance(0.5) ? REFRESH : REVOKE, { refresh_token: forged }).catch(() => undefined);
      return;
    }
    const pair = random.chance(0.7) ? newest(family) : random.pick(family.pairs);
    const region = somewhere(family);
    const headers = { authorization: `Bearer ${pair.token}`, 'content-type': 'application/json' };
    const before: RefreshesSeen = { ...family.refreshes };
    const answer = await (random.chance(0.5)
      ? via(client, region).send('/v5/Transaction/charge', { method: 'POST', headers, body: '{}' })
      : via(client, region).send('/forward-auth?permission=transaction:charge', { headers: { authorization: headers.authorization } })
    ).catch(() => undefined);
    const witness = { status: answer?.status, presentedGeneration: pair.generation, before, after: { ...family.refreshes, revokeSent: family.revokeSent, rotatedUnseen: family.rotatedUnseen, newestGeneration: newest(family).generation } };
    if (answer && showsRevocationApplied(witness)) recorder.applied(region, pair.token, answer.calledAt, answer.returnedAt);
  }

  async function run(): Promise<void> {
    const client = recorder.newClient();
    while (!stopping) {
      if (paused) {
        await paused.promise;
        continue;
      }
      inFlight += 1;
      try {
        await step(client);
        requests += 1;
      } catch {
        // A refused connection while a region is down: recorded with status 0, nothing more to do.
      } finally {
        inFlight -= 1;
        if (inFlight === 0) idle?.();
      }
      await sleep(random.between(options.pauseMs[0], options.pauseMs[1]));
    }
  }

  const running = Array.from({ length: options.clients }, () => run());
  return {
    async pause() {
      if (!paused) {
        let resume!: () => void;
        const promise = new Promise<void>((resolve) => (resume = resolve));
        paused = { promise, resume };
      }
      if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve));
      idle = undefined;
    },
    resume() {
      const was = paused;
      paused = undefined;
      was?.resume();
    },
    async stop() {
      stopping = true;
      this.resume();
      await Promise.all(running);
      for (const connection of connections) connection.http.close();
      return { requests };
    },
  };
}
