import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService, type CreatedAccount } from '@tessera/accounts';
import { ManualClock, ManualScheduler, epochSeconds } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * Revocations survive a restart, as a user found it: revoke pair Q and refresh pair P, then restart the
 * all-in-one on the same data folder with a 5-second access-token lifetime. The old access
 * tokens still carry their own one-hour exp, so the restarted verifier must still reject them,
 * whatever its own configuration says (docs/decisions/0008-revocations-never-come-back.md).
 *
 * The restart also lowers the legacy lifetime and the skew and comes more than 5 s after the
 * revocation: the window used to be max(access TTL, legacy TTL) + skew back from now, and with
 * the default legacy TTL (30 min) it would have covered the revocation by luck. Those 6 s pass
 * on the clock both runs share, between the stop and the restart: nothing waits them out.
 */
interface Pair {
  token: string;
  refresh_token: string;
}

const clock = new ManualClock();
const scheduler = new ManualScheduler(clock);
const running: InProcessAllInOne[] = [];
let restarted: InProcessAllInOne;
let q: Pair;
let p: Pair;
let p2: Pair;

beforeAll(async () => {
  // keepData: the second run opens the first run's data folder; afterAll removes it.
  const first = await startInProcess({ clock, scheduler, keepData: true });
  running.push(first);
  const account = await createAccountService({ store: first.store, hasher: first.hasher, now: () => epochSeconds(clock), actor: 'test' }).create({
    name: 'restart shop',
    permissions: ['transaction:charge'],
    legacy: false,
  });
  await first.caughtUp();
  q = await getPair(first, account);
  p = await getPair(first, account);
  expect((await postJson(first, '/v5/Authorization/revoke-oauth-token', { refresh_token: q.refresh_token })).statusCode).toBe(200);
  p2 = await refresh(first, p);
  const changedAt = clock.now();
  await first.close();
  await scheduler.advanceTo(changedAt + 6_000);
  restarted = await startInProcess({
    clock,
    scheduler,
    env: { TESSERA_ACCESS_TOKEN_TTL: '5', TESSERA_LEGACY_TOKEN_TTL: '5', TESSERA_CLOCK_SKEW: '0' },
    keepData: true,
    dataDir: first.dataDir,
  });
  running.push(restarted);
});
afterAll(async () => {
  for (const tessera of running.reverse()) await tessera.close();
  for (const dataDir of new Set(running.map((t) => t.dataDir))) rmSync(dataDir, { recursive: true, force: true });
});

const postJson = (tessera: InProcessAllInOne, url: string, body: Record<string, unknown>) => tessera.app.inject({ method: 'POST', url, payload: body });
async function getPair(tessera: InProcessAllInOne, account: CreatedAccount): Promise<Pair> {
  const answer = await postJson(tessera, '/v5/Authorization/get-oauth-token', { api_login_id: account.apiLoginId, transaction_key: account.transactionKey });
  expect(answer.statusCode).toBe(200);
  return answer.json<Pair>();
}
async function refresh(tessera: InProcessAllInOne, pair: Pair): Promise<Pair> {
  const answer = await postJson(tessera, '/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token });
  expect(answer.statusCode).toBe(200);
  return answer.json<Pair>();
}
const charge = (tessera: InProcessAllInOne, token: string) =>
  tessera.app.inject({ method: 'POST', url: '/v5/Transaction/charge', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: '{"amount":"1.00"}' });
const forwardAuth = (tessera: InProcessAllInOne, token: string) =>
  tessera.app.inject({ method: 'GET', url: '/forward-auth?permission=transaction:charge', headers: { authorization: `Bearer ${token}` } });

async function expectRejectedAsRevoked(what: string, token: string): Promise<void> {
  const charged = await charge(restarted, token);
  expect(charged.statusCode, `${what} on the charge route`).toBe(401);
  expect(charged.json<{ detail: string }>().detail, what).toMatch(/revoked or replaced/);
  const forwarded = await forwardAuth(restarted, token);
  expect(forwarded.statusCode, `${what} on forward-auth`).toBe(401);
}

describe('revocations after a restart with a shorter access-token lifetime', () => {
  it('the revoked and the replaced access tokens are 401 on the charge route and on forward-auth', async () => {
    expect(restarted.fatal()).toBeUndefined();
    await expectRejectedAsRevoked('revoked (Q)', q.token);
    await expectRejectedAsRevoked('replaced by a refresh (P)', p.token);
    // The restarted verifier does accept good tokens: the pair that replaced P is still valid.
    expect((await charge(restarted, p2.token)).statusCode).toBe(200);
    expect((await forwardAuth(restarted, p2.token)).statusCode).toBe(200);
  });
});
