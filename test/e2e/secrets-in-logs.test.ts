import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/** Spec 5.8 and the house rule: no key or token value appears in the logs or the event log. */
let tessera: TesseraProcess;
beforeAll(async () => {
  tessera = await startTessera({ TESSERA_LOG_LEVEL: 'trace' });
});
afterAll(async () => {
  await tessera?.stop();
});

describe('secrets', () => {
  it('the whole lifecycle, refusals included, leaves no secret in the log output or the event store', async () => {
    const account = await tessera.createAccount({ legacy: true });
    const secrets: string[] = [account.transaction_key, account.apikey!];
    const pair = (
      await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })
    ).json() as { token: string; refresh_token: string };
    secrets.push(pair.token, pair.refresh_token);
    await tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${pair.token}` }, body: '{}' });
    await tessera.request(`/forward-auth?permission=transaction:charge`, { headers: { authorization: `Bearer ${pair.token}` } });
    const next = (await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token })).json() as {
      token: string;
      refresh_token: string;
    };
    secrets.push(next.token, next.refresh_token);
    await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token });
    await tessera.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${pair.token}` }, body: '{}' });
    await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: next.refresh_token });
    await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: `${account.transaction_key}x` });
    const legacy = await tessera.request('/v1/authenticate', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ apiid: account.apiid!, apikey: account.apikey! }).toString(),
    });
    const legacyToken = (legacy.json().result as { authentication_token: string }).authentication_token;
    secrets.push(legacyToken);
    await tessera.request('/v1/account', { headers: { authorization: `bearer ${legacyToken}` } });
    // A careless client putting a token in the query string.
    await tessera.request(`/v1/account?access_token=${legacyToken}`);

    const logs = tessera.logs();
    // Not vacuous: at trace level every request above has its line.
    expect(logs.split('\n').filter((line) => line.includes('"msg":"request completed"')).length).toBeGreaterThanOrEqual(10);
    for (const secret of secrets) {
      expect(logs).not.toContain(secret);
      // Secrets also must not sit in the event log or anywhere else in the data folder, but for
      // the key files themselves; the SQLite file holds only keyed hashes.
      for (const file of filesUnder(tessera.dataDir)) {
        expect(readFileSync(file).includes(Buffer.from(secret)), `${secret.slice(0, 4)}… in ${file}`).toBe(false);
      }
    }
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}
