import { join } from 'node:path';
import { checkHistory } from './check-history.js';
import { HistoryRecorder, recordingClient } from './history.js';
import { REVOKE, check, inBatches, until, type Figure, type Pair, type SimContext } from './sim-helpers.js';
import type { Credentials } from '../support/tessera-process.js';
import type { Topology } from './topology.js';

const hook = join(import.meta.dirname, 'seeded-bug', 'skip-current-token-check.mjs');

/**
 * The checker must catch a real bug, or its silence proves nothing. A second all-in-one in region b
 * runs with one seeded bug (seeded-bug/: the revoke it decides away from home skips the
 * current-token check), its link to a cut; its history of a few families issued in a and revoked
 * in it with forged tokens is checked apart from the run's, and the checker must call it not
 * linearizable, naming a forged revoke answered 200.
 */
export async function seededBug(topology: Topology, account: Credentials, context: SimContext, historyFile: string): Promise<Figure[]> {
  const recorder = new HistoryRecorder();
  const extra = await topology.startExtraInB({ nodeArgs: ['--import', hook] });
  try {
    const inA = recordingClient(topology.a.http, 'a', recorder);
    const inB = recordingClient(extra.http, 'b', recorder);
    const pairs = await inBatches(Array.from({ length: 10 }), 4, async () => (await inA.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json<Pair>());
    // The extra process holds the check material of these families (the bug skips only the comparison).
    await until(async () => (await extra.metric('tessera_family_check_entries')) >= pairs.length, true, 'the seeded process holds a\'s check material', 60_000, 100);
    await extra.setLinkToA(false);
    await until(async () => await extra.metric('tessera_peer_reachable{region="a"}'), 0, 'the seeded process marking a unreachable', 15_000, 50);
    const statuses: number[] = [];
    for (const pair of pairs) {
      const forged = `tsr_${JSON.parse(Buffer.from(pair.token.split('.')[1]!, 'base64url').toString('utf8')).fid as string}.${context.random.text(43)}`;
      statuses.push((await inB.postJson(REVOKE, { refresh_token: forged })).status);
    }
    await extra.setLinkToA(true);
    recorder.write(historyFile);
    const verdict = await checkHistory(historyFile);
    check(statuses.includes(200), `the seeded bug never showed: forged revokes answered ${statuses.join(', ')} (the hook did not take?)`);
    check(verdict.code === 1, `the checker, on the seeded bug's history, exited ${verdict.code}: ${verdict.stdout}${verdict.stderr}`);
    check(/revoke forged in b → 200/.test(verdict.stdout), `the checker's report does not name the forged revoke answered 200:\n${verdict.stdout}`);
    return [
      {
        scenario: 'seeded bug: b revokes without the current-token check',
        measure: `forged revokes in b answered 200 / the checker on that history (${recorder.operations} operations)`,
        value: `${statuses.filter((status) => status === 200).length} of ${statuses.length} / exit 1, ${verdict.stdout.split('\n')[0]!.slice(0, 80)}…`,
      },
    ];
  } finally {
    await extra.stop();
  }
}
