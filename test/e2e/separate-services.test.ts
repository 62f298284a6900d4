import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * The services run apart, configured from env. Two issuer processes share
 * one SQLite folder and race; a verifier process follows the same log.
 */
let issuerA: TesseraProcess;
let issuerB: TesseraProcess;
let verifier: TesseraProcess;
let account: Credentials;

beforeAll(async () => {
  issuerA = await startTessera({}, { command: 'issuer', keepData: true });
  issuerB = await startTessera({}, { command: 'issuer', dataDir: issuerA.dataDir, keepData: true });
  verifier = await startTessera({}, { command: 'verifier', dataDir: issuerA.dataDir });
  account = await issuerA.createAccount();
});
afterAll(async () => {
  await verifier?.stop();
  await issuerB?.stop();
  await issuerA?.stop();
});

const charge = (token: string) => verifier.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });

describe('issuer and verifier as separate processes', () => {
  it('an issuer serves the token routes and the JWKS but no protected routes; a verifier the reverse', async () => {
    expect((await issuerA.request('/v5/Transaction/charge', { method: 'POST' })).status).toBe(404);
    expect((await issuerA.request('/.well-known/jwks.json')).status).toBe(200);
    expect((await verifier.postJson('/v5/Authorization/get-oauth-token', { api_login_id: 'x', transaction_key: 'y' })).status).toBe(404);
  });

  it("the admin console is on an issuer's admin listener, where the admin API is: not on its public one, not on a verifier's", async () => {
    const page = await issuerA.adminRequest('/console/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'self'/);
    expect((await issuerA.request('/console/')).status).toBe(404);
    expect((await verifier.adminRequest('/console/')).status).toBe(404);
  });

  it('of 16 refreshes of one token spread over two issuer processes, exactly one wins, 5 rounds', async () => {
    for (let round = 0; round < 5; round += 1) {
      const pair = (
        await issuerA.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })
      ).json() as { token: string; refresh_token: string };
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? issuerA : issuerB).postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token })),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 401)).toHaveLength(15);
      const winner = answers.find((a) => a.status === 200)!.json() as { token: string };
      // The verifier process learns the rotation from the shared log (and the other issuer's key).
      await expect.poll(async () => (await charge(pair.token)).status, { timeout: 2_000, interval: 20 }).toBe(401);
      await expect.poll(async () => (await charge(winner.token)).status, { timeout: 2_000, interval: 20 }).toBe(200);
    }
  });

  it('an issuer serves the audit queries on its admin listener, as the all-in-one does', async () => {
    const { stdout } = await issuerA.tessera(['admin-tokens', 'create', '--name', 'auditor', '--scope', 'audit:read', '--json']);
    const authorization = `Bearer ${(JSON.parse(stdout) as { admin_token: string }).admin_token}`;
    // The audit index follows the log in the issuer's own process: the account the harness made is there.
    await expect
      .poll(async () => {
        const answer = await issuerA.adminRequest(`/admin/v1/events?account=${account.account_id}`, { headers: { authorization } });
        return answer.status === 200 ? (answer.json() as { events: { type: string }[] }).events.map((event) => event.type).slice(0, 2) : answer.status;
      }, { timeout: 5_000 })
      .toEqual(['AccountRegistered', 'ApiCredentialIssued']);
    const at = new Date().toISOString();
    // The other issuer learns the new admin token from the shared log, a moment after issuerA wrote it.
    const accessAtPath = `/admin/v1/accounts/${account.account_id}/access-at?at=${at}`;
    await expect.poll(async () => (await issuerB.adminRequest(accessAtPath, { headers: { authorization } })).status, { timeout: 5_000 }).toBe(200);
    const accessAt = await issuerB.adminRequest(accessAtPath, { headers: { authorization } });
    expect(accessAt.status).toBe(200);
    expect((accessAt.json() as { families: unknown[] }).families.length).toBeGreaterThan(0);
    // Without a token, 401 with the challenge, as on every admin route.
    expect((await issuerA.adminRequest('/admin/v1/events')).status).toBe(401);
  });

  it('both issuers publish their keys; the verifier accepts tokens signed by either', async () => {
    const fromB = (
      await issuerB.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })
    ).json() as { token: string };
    await expect.poll(async () => (await charge(fromB.token)).status, { timeout: 2_000, interval: 20 }).toBe(200);
  });
});
