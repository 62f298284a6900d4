import { afterEach, describe, expect, it } from 'vitest';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Failed authentications are auditable as counts per credential per minute, never one event
 * per failure: through the real server, read back with `tessera audit`.
 */
let tessera: TesseraProcess | undefined;
afterEach(async () => {
  await tessera?.stop();
  tessera = undefined;
});

describe('failed authentications in the audit trail', () => {
  it('wrong keys for one login and 30 invented logins become at most one event each per minute, written by the time the issuer stops', async () => {
    tessera = await startTessera({}, { keepData: true });
    const account = await tessera.createAccount();
    let refused = 0;
    for (let i = 0; i < 20; i += 1) {
      const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: `tsk_wrong_${i}` });
      expect([401, 429]).toContain(answer.status);
      if (answer.status === 401) refused += 1;
    }
    // Past the credential's failure budget the throttle answers 429 without checking the key:
    // those are counted in tessera_throttled_total, and only checked failures here.
    expect(refused).toBeGreaterThan(0);
    for (let i = 0; i < 30; i += 1) {
      await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: `tsl_invented_${i}`, transaction_key: 'tsk_whatever' });
    }
    const dataDir = tessera.dataDir;
    const { tessera: cli } = tessera;
    tessera.signal('SIGTERM');
    expect(await tessera.exited).toBe(0);

    const rowsOf = async (args: string[]) =>
      (JSON.parse((await cli(['audit', '--type', 'AuthenticationFailuresCounted', ...args, '--json'])).stdout) as { account_id: string | null; reason: string }[]);
    const countOf = (rows: { reason: string }[]) => rows.reduce((sum, row) => sum + Number(/^(\d+) failed v5 authentications/.exec(row.reason)?.[1]), 0);
    const known = await rowsOf(['--api-login-id', account.api_login_id]);
    const all = await rowsOf([]);
    const unknown = all.filter((row) => row.account_id === null);
    expect(countOf(known)).toBe(refused);
    // At least the 30: createAccount's first tries, before the server has read the new account, count too.
    expect(countOf(unknown)).toBeGreaterThanOrEqual(30);
    // One event per minute at most, whatever the number of failures (two if the run crossed a minute).
    expect(known.length).toBeLessThanOrEqual(2);
    expect(unknown.length).toBeLessThanOrEqual(2);
    expect(known[0]?.account_id).toBe(account.account_id);
    // No invented login is kept: it may be a secret typed into the wrong field.
    expect(JSON.stringify(all)).not.toContain('tsl_invented_');
    tessera = await startTessera({}, { dataDir }); // stop() removes the folder
  });
});
