import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Revocations survive a restart, as a user found it: revoke pair Q and refresh pair P, then restart the
 * all-in-one on the same data folder with a 5-second access-token lifetime. The old access
 * tokens still carry their own one-hour exp, so the restarted verifier must still reject them,
 * whatever its own configuration says (docs/decisions/0008-revocations-never-come-back.md).
 *
 * The restart also lowers the legacy lifetime and the skew and comes more than 5 s after the
 * revocation: the window used to be max(access TTL, legacy TTL) + skew back from now, and with
 * the default legacy TTL (30 min) it would have covered the revocation by luck.
 */
interface Pair {
  token: string;
  refresh_token: string;
}

const running: TesseraProcess[] = [];
let restarted: TesseraProcess;
let q: Pair;
let p: Pair;
let p2: Pair;

beforeAll(async () => {
  // keepData: the second run opens the first run's data folder; afterAll removes it.
  const first = await startTessera({}, { keepData: true });
  running.push(first);
  const account = await first.createAccount();
  q = await getPair(first, account);
  p = await getPair(first, account);
  expect((await first.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: q.refresh_token })).status).toBe(200);
  p2 = await refresh(first, p);
  const changedAt = Date.now();
  await first.stop();
  await new Promise((r) => setTimeout(r, Math.max(0, changedAt + 6_000 - Date.now())));
  restarted = await startTessera(
    { TESSERA_ACCESS_TOKEN_TTL: '5', TESSERA_LEGACY_TOKEN_TTL: '5', TESSERA_CLOCK_SKEW: '0' },
    { keepData: true, dataDir: first.dataDir },
  );
  running.push(restarted);
});
afterAll(async () => {
  for (const tessera of running.reverse()) await tessera.stop();
  for (const dataDir of new Set(running.map((t) => t.dataDir))) rmSync(dataDir, { recursive: true, force: true });
});

async function getPair(tessera: TesseraProcess, account: Credentials): Promise<Pair> {
  const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
  expect(answer.status).toBe(200);
  return answer.json() as unknown as Pair;
}
async function refresh(tessera: TesseraProcess, pair: Pair): Promise<Pair> {
  const answer = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token });
  expect(answer.status).toBe(200);
  return answer.json() as unknown as Pair;
}
const charge = (tessera: TesseraProcess, token: string) =>
  tessera.request('/v5/Transaction/charge', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{"amount":"1.00"}',
  });
const forwardAuth = (tessera: TesseraProcess, token: string) =>
  tessera.request('/forward-auth?permission=transaction:charge', { headers: { authorization: `Bearer ${token}` } });

async function expectRejectedAsRevoked(what: string, token: string): Promise<void> {
  const charged = await charge(restarted, token);
  expect(charged.status, `${what} on the charge route`).toBe(401);
  expect(charged.json().detail, what).toMatch(/revoked or replaced/);
  const forwarded = await forwardAuth(restarted, token);
  expect(forwarded.status, `${what} on forward-auth`).toBe(401);
}

describe('revocations after a restart with a shorter access-token lifetime', () => {
  it('the revoked and the replaced access tokens are 401 on the charge route and on forward-auth', async () => {
    await expectRejectedAsRevoked('revoked (Q)', q.token);
    await expectRejectedAsRevoked('replaced by a refresh (P)', p.token);
    // The restarted verifier does accept good tokens: the pair that replaced P is still valid.
    expect((await charge(restarted, p2.token)).status).toBe(200);
    expect((await forwardAuth(restarted, p2.token)).status).toBe(200);
  });
});
