import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * TESSERA_REFRESH_REUSE (docs/decisions/0010): a used refresh token presented again, through the real
 * server. `keep` (the default, the interface's rule) changes nothing; `revoke-family` revokes the family, so
 * the pair the thief (or the client) got with that token stops working too. Both answer 401.
 */
describe.each<{ setting: string; env: Record<string, string>; newerPairAfterReuse: number }>([
  { setting: 'keep (unset, the default)', env: {}, newerPairAfterReuse: 200 },
  { setting: 'revoke-family', env: { TESSERA_REFRESH_REUSE: 'revoke-family' }, newerPairAfterReuse: 401 },
])('TESSERA_REFRESH_REUSE=$setting', ({ env, newerPairAfterReuse }) => {
  let tessera: TesseraProcess;
  let account: Credentials;
  beforeAll(async () => {
    tessera = await startTessera(env);
    account = await tessera.createAccount();
  });
  afterAll(async () => {
    await tessera?.stop();
  });

  const refresh = (refreshToken: string) => tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: refreshToken });
  const charge = (token: string) => tessera.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${token}` });

  it(`a reused refresh token gets 401, and the newer access token then gets ${newerPairAfterReuse} on the charge route`, async () => {
    const first = (
      await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })
    ).json() as { refresh_token: string };
    const newer = await refresh(first.refresh_token);
    expect(newer.status).toBe(200);
    const pair = newer.json() as { token: string; refresh_token: string };
    expect((await charge(pair.token)).status).toBe(200);

    expect((await refresh(first.refresh_token)).status).toBe(401);

    expect((await charge(pair.token)).status).toBe(newerPairAfterReuse);
    expect((await refresh(pair.refresh_token)).status).toBe(newerPairAfterReuse);
  });
});
