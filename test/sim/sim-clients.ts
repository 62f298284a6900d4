import type { Credentials } from '../support/tessera-process.js';
import { recordingClient, type RecordingClient } from './history.js';
import { GET_TOKEN, REVOKE, ScenarioFailed, check, check401, fidOf, inBatches, sleep, until, type Pair, type SimContext } from './sim-helpers.js';
import type { RegionName, Topology } from './topology.js';

/**
 * The two regions as the scenarios' client sees them, every exchange recorded in the history, and
 * the steps several scenarios share: issue, wait until b accepts or can check a's families, revoke
 * in b while a is out of reach, watch a revocation take effect, watch b's failure detector.
 */
export function simClients(topology: Topology, account: Credentials, context: SimContext) {
  const { recorder, random } = context;
  // Every exchange of the scenarios is a client operation of the history.
  const recorded = (region: RegionName) => ({
    name: region,
    get server() {
      return topology[region].server;
    },
    http: recordingClient(topology[region].http, region, recorder),
    metric: (series: string) => topology[region].metric(series),
    mirroredDuplicates: () => topology[region].mirroredDuplicates(),
  });
  const a = recorded('a');
  const b = recorded('b');
  const regions = { a, b };
  const issue = async (region: RegionName): Promise<Pair> => {
    const answer = await regions[region].http.postJson(GET_TOKEN, { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    check(answer.status === 200, `get-oauth-token in ${region} answered ${answer.status}: ${answer.text}`);
    return answer.json<Pair>();
  };
  /**
   * Polls `region` with a revoked family's newest token until it is refused: the first 401 is the
   * revocation seen applied there (recorded), and the time it took is returned.
   */
  const untilRevokedIn = async (http: RecordingClient, token: string, what: string, timeoutMs: number, everyMs: number) => {
    const started = performance.now();
    for (;;) {
      const answer = await check401(http, token);
      if (answer.status === 401) {
        recorder.applied(http.region, token, answer.calledAt, answer.returnedAt);
        return performance.now() - started;
      }
      if (performance.now() - started > timeoutMs) throw new ScenarioFailed(`${what}: not within ${timeoutMs} ms`);
      await sleep(everyMs);
    }
  };
  /** Pairs issued in a that b already accepts: a's key is known in b, so a later 401 can only be the revocation. */
  const acceptedInB = async (count: number): Promise<Pair[]> => {
    const pairs = await inBatches(Array.from({ length: count }), 8, () => issue('a'));
    await inBatches(pairs, 8, (pair) => until(async () => (await check401(b.http, pair.token)).status, 200, 'an a-issued token accepted in b', 15_000, 10));
    return pairs;
  };
  /** Pairs issued in a whose check material b holds too: what b needs to revoke them while a is out of reach. */
  const checkableInB = async (count: number): Promise<Pair[]> => {
    const pairs = await acceptedInB(count);
    const families = recorder.familiesOf('a');
    await until(async () => (await topology.b.metric('tessera_family_check_entries')) >= families, true, 'b holds the check material of a\'s families', 30_000, 50);
    return pairs;
  };
  /** How long until b's failure detector marks a unreachable (tessera_peer_reachable), from `since`. */
  const untilMarked = async (reachable: 0 | 1, since: number, timeoutMs: number) => {
    await until(async () => await topology.b.metric('tessera_peer_reachable{region="a"}'), reachable, `b's detector marking a ${reachable === 0 ? 'unreachable' : 'reachable'}`, timeoutMs, 20);
    return performance.now() - since;
  };
  /** A revoke in b of an a-homed family that a cannot answer: 200, timed, and the token refused in b at the very next request. */
  const revokeInB = async (pair: Pair): Promise<number> => {
    const started = performance.now();
    const revoked = await b.http.postJson(REVOKE, { refresh_token: pair.refresh_token });
    const took = performance.now() - started;
    check(revoked.status === 200, `a revoke in b of an a-homed family while a is out of reach answered ${revoked.status}: ${revoked.text}`);
    const inB = await check401(b.http, pair.token);
    check(inB.status === 401, `a token revoked in b is refused in b at once (got ${inB.status})`);
    recorder.applied('b', pair.token, inB.calledAt, inB.returnedAt);
    return took;
  };
  /** A refresh token naming a real family, with a secret it never issued. */
  const forgedFor = (pair: Pair) => `tsr_${fidOf(pair.token)}.${random.text(43)}`;

  return { a, b, issue, untilRevokedIn, acceptedInB, checkableInB, untilMarked, revokeInB, forgedFor };
}

export type SimClients = ReturnType<typeof simClients>;
