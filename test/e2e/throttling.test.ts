import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type HttpAnswer, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Throttling of failed attempts, against the real server on its default budgets. Observed before: 1,000
 * wrong keys in a row got 1,000 × 401, and the right key straight afterwards got 200.
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

const getToken = (transactionKey: string, localAddress: string) =>
  tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: transactionKey }, {}, { localAddress });

/** `count` attempts, `parallel` at a time, tallied by status. */
async function attempts(count: number, parallel: number, attempt: () => Promise<HttpAnswer>): Promise<Record<number, number>> {
  const tally: Record<number, number> = {};
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started += 1;
      const { status } = await attempt();
      tally[status] = (tally[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return tally;
}

describe('an attacker hammering one API Login ID from 127.0.0.1', () => {
  it('gets 429 once its budget is spent, while the rightful client of that same ID on 127.0.0.2 keeps getting 200; throttled attempts are counted in /metrics', async () => {
    const [attacker, rightful] = await Promise.all([
      attempts(1000, 8, () => getToken('wrong-key', '127.0.0.1')),
      attempts(100, 1, () => getToken(account.transaction_key, '127.0.0.2')),
    ]);
    // The figures for the closing note.
    console.info(`attacker on 127.0.0.1: ${JSON.stringify(attacker)}; rightful client on 127.0.0.2: ${JSON.stringify(rightful)}`);
    // TESSERA_THROTTLE_CREDENTIAL_FAILURES (10) wrong keys are answered; a few more may be in flight as the tenth lands.
    expect(attacker[401]).toBeGreaterThanOrEqual(10);
    expect(attacker[401]).toBeLessThan(10 + 8);
    expect(attacker[429]).toBe(1000 - attacker[401]!);
    expect(rightful).toEqual({ 200: 100 });

    // The right key from the attacker's address is refused too; from another address it works.
    const right = await getToken(account.transaction_key, '127.0.0.1');
    expect(right.status).toBe(429);
    expect(right.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
    expect(right.json()).toMatchObject({ type: 'urn:tessera:problem:too-many-requests', status: 429 });
    expect((await getToken(account.transaction_key, '127.0.0.3')).status).toBe(200);

    const metrics = (await tessera.adminRequest('/metrics')).text;
    const line = (name: string) => Number(metrics.match(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\d+)`, 'm'))?.[1] ?? NaN);
    expect(line('tessera_throttled_total{operation="issue",scope="credential"}')).toBe(attacker[429]! + 1);
    expect(line('tessera_tokens_total{operation="issue",outcome="throttled"}')).toBe(attacker[429]! + 1);
  });
});
