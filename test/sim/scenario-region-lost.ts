import { REFRESH, check, check401, ms, percentile, sleep, until, type Figure, type Pair, type SimContext } from './sim-helpers.js';
import type { SimClients } from './sim-clients.js';
import type { Topology } from './topology.js';

/**
 * Region a, the home of some families and the control region, lost: its all-in-one stopped.
 * b revokes a's families itself once its failure detector has marked a, and takes over account
 * writes with `tessera regions promote-control --region b`. When a returns it applies what b
 * recorded before it is ready (its refreshes of those families answer 401 from its first
 * request), and it never writes an account again beside b: its CLI and admin API refuse, naming b.
 */
export async function regionLost(topology: Topology, clients: SimClients, context: SimContext, options: { readonly revocations: number }): Promise<Figure[]> {
  const { recorder, random } = context;
  const { a, b } = clients;
  const scenario = 'region a lost (its all-in-one stopped), then back';
  const figures: Figure[] = [];
  const pairs: Pair[] = await clients.checkableInB(options.revocations);

  // Before: a is the control region, so b's CLI refuses account writes, naming a.
  const beforeInB = await topology.cli('b', ['accounts', 'create', '--name', 'sim-in-b-too-early', '--json']);
  check(beforeInB.code === 5 && beforeInB.stderr.includes('control region, a (epoch 0)'), `accounts create in b before any promotion: exit ${beforeInB.code}, ${beforeInB.stderr.trim()}`);
  const adminTokenInA = (JSON.parse((await topology.cli('a', ['admin-tokens', 'create', '--name', 'sim-ops-a', '--scope', 'tokens:revoke', '--json'])).stdout) as { admin_token: string }).admin_token;

  await topology.stopServer('a');
  const lostAt = performance.now();
  const isolatedFrom = recorder.now();
  let returned = false;
  try {
    const first = await clients.revokeInB(pairs[0]!);
    const markedMs = await clients.untilMarked(0, lostAt, 15_000);
    const times = await context.quietly(async () => {
      const taken: number[] = [];
      for (const pair of pairs.slice(1)) {
        await sleep(random.between(5, 25));
        taken.push(await clients.revokeInB(pair));
      }
      return taken;
    });
    figures.push(
      { scenario, measure: 'b marks a unreachable, from the stop', value: ms(markedMs) },
      { scenario, measure: 'first revoke in b after the stop', value: `200 in ${ms(first)}` },
      { scenario, measure: `revoke in b once marked: p50 / p99 / max of ${times.length} (workload paused)`, value: `${ms(percentile(times, 50))} / ${ms(percentile(times, 99))} / ${ms(Math.max(...times))}; each token 401 in b at the next request` },
    );
    check(percentile(times, 99) <= 50, `revoke in b while a is lost: p99 ${ms(percentile(times, 99))}, target ≤ 50 ms`);

    // Control-region failover, as a command in b.
    const promoted = await topology.cli('b', ['regions', 'promote-control', '--region', 'b', '--json']);
    check(promoted.code === 0, `promote-control in b: exit ${promoted.code}, ${promoted.stderr.trim()}`);
    check((JSON.parse(promoted.stdout) as { epoch: number }).epoch === 1, `the promotion's epoch: ${promoted.stdout.trim()}, want 1`);
    const createdInB = await topology.cli('b', ['accounts', 'create', '--name', 'sim-made-in-b', '--json']);
    check(createdInB.code === 0, `accounts create in b after the promotion: exit ${createdInB.code}, ${createdInB.stderr.trim()}`);
    const accountInB = (JSON.parse(createdInB.stdout) as { account_id: string }).account_id;
    const adminTokenInB = (JSON.parse((await topology.cli('b', ['admin-tokens', 'create', '--name', 'sim-ops-b', '--scope', 'tokens:revoke', '--json'])).stdout) as { admin_token: string }).admin_token;
    const cutInB = () => b.server.adminRequest(`/admin/v1/accounts/${accountInB}/revoke-tokens`, { method: 'POST', headers: { authorization: `Bearer ${adminTokenInB}` } });
    await until(async () => (await cutInB()).status, 200, 'an account cut through b\'s admin API after the promotion', 10_000, 100);

    // a returns, and is fenced off: what it answers before it has read b's account topic is 503, never 200.
    recorder.isolated('a', isolatedFrom, recorder.now());
    returned = true;
    const restarted = performance.now();
    await topology.startServer('a');
    const cutInA = () => a.server.adminRequest(`/admin/v1/accounts/${accountInB}/revoke-tokens`, { method: 'POST', headers: { authorization: `Bearer ${adminTokenInA}` } });
    const seen = new Set<number>();
    await until(
      async () => {
        const status = (await cutInA()).status;
        seen.add(status);
        return status;
      },
      409,
      'a\'s admin API refusing account writes after its return',
      120_000,
      50,
    );
    check([...seen].every((status) => status === 409 || status === 503), `a's admin API after its return answered ${[...seen].join(', ')}: only 503 (not confirmed yet) and 409 may come`);
    await topology.untilReady('a', 120_000);
    const readyMs = performance.now() - restarted;
    // Ready means caught up with b's topics: what b revoked is refused in a from the first request.
    for (const pair of pairs) {
      const refresh = await a.http.postJson(REFRESH, { refresh_token: pair.refresh_token });
      check(refresh.status === 401, `a refresh at a, just ready, of a family revoked in b while a was lost answered ${refresh.status}`);
      const charge = await check401(a.http, pair.token);
      check(charge.status === 401, `a token revoked in b while a was lost, at a just ready: ${charge.status}`);
      recorder.applied('a', pair.token, charge.calledAt, charge.returnedAt);
    }
    const cliInA = await topology.cli('a', ['accounts', 'create', '--name', 'sim-too-late-in-a', '--json']);
    check(cliInA.code === 5 && cliInA.stderr.includes('control region, b (epoch 1)'), `accounts create in a after its return: exit ${cliInA.code}, ${cliInA.stderr.trim()}`);
    figures.push(
      { scenario, measure: 'a restarted until ready; then what b revoked meanwhile', value: `${ms(readyMs)}; ${pairs.length} of ${pairs.length} refused in a, and their refresh 401, at the first request` },
      {
        scenario,
        measure: 'account writes: b before / after promote-control --region b; a after its return',
        value: `CLI exit 5 naming a / CLI 0, admin API 200 / CLI exit 5 and admin API 409 naming b (before: ${[...seen].sort().join(', ')})`,
      },
    );

    // And back: a is promoted again (epoch 2) and writes accounts again.
    const back = await topology.cli('a', ['regions', 'promote-control', '--region', 'a', '--json']);
    check(back.code === 0 && (JSON.parse(back.stdout) as { epoch: number }).epoch === 2, `promote-control back to a: exit ${back.code}, ${back.stdout.trim()} ${back.stderr.trim()}`);
    await until(async () => (await topology.cli('b', ['accounts', 'create', '--name', 'sim-in-b-after-failback', '--json'])).code, 5, 'b refusing account writes once a is promoted back', 30_000, 500);
  } finally {
    if (!returned) {
      recorder.isolated('a', isolatedFrom, recorder.now());
      await topology.startServer('a').catch(() => undefined);
    }
  }
  return figures;
}
