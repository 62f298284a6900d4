import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Spec 5.10 warns that concurrent refreshes can use an already revoked refresh token; the
 * server's side of that is: of N concurrent refreshes of one token, exactly one wins.
 */
let tessera: TesseraProcess;
let account: Credentials;
beforeAll(async () => {
  tessera = await startTessera();
  account = await tessera.createAccount();
});
afterAll(async () => {
  await tessera?.stop();
});

async function newPair() {
  const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', {
    api_login_id: account.api_login_id,
    transaction_key: account.transaction_key,
  });
  return answer.json() as { token: string; refresh_token: string };
}
const charge = (token: string) => tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });

describe('concurrent refreshes of one refresh token', () => {
  it.each([1, 2, 3, 4, 5])('round %i: of 16 parallel refreshes exactly one gets 200 and 15 get 401', async () => {
    const pair = await newPair();
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(15);
    const winner = answers.find((a) => a.status === 200)!.json() as { token: string; refresh_token: string };
    // The winner's pair is the family's only live one.
    expect((await charge(winner.token)).status).toBe(200);
    expect((await charge(pair.token)).status).toBe(401);
    expect((await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: winner.refresh_token })).status).toBe(200);
  });

  it('a refresh racing a revoke never mints a pair that outlives the revocation', async () => {
    for (let round = 0; round < 10; round += 1) {
      const pair = await newPair();
      const [refreshed, revoked] = await Promise.all([
        tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token }),
        tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token }),
      ]);
      // Exactly one of the two moved the family.
      expect([refreshed.status, revoked.status].sort()).toEqual([200, 401]);
      if (revoked.status === 200) {
        expect((await charge(pair.token)).status).toBe(401);
      } else {
        // The refresh won, so the revoke presented a used token: the new pair is the live one,
        // and revoking *it* kills the family.
        const next = refreshed.json() as { token: string; refresh_token: string };
        expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: next.refresh_token })).status).toBe(200);
        expect((await charge(next.token)).status).toBe(401);
      }
    }
  });
});
