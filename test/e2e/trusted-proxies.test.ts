import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundToKey, dpopClient } from '../support/dpop.js';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * TESSERA_TRUSTED_PROXIES, through `tessera start`. Behind a proxy every connection comes from the
 * proxy's address, so without it the per-address throttles would lump all clients together; with
 * it, the client is the nearest untrusted address in X-Forwarded-For. Unset, the header is
 * ignored: a client that could name its own address could escape every per-address budget.
 * The test client connects from 127.0.0.1 (standing in for the proxy) or 127.0.0.2 (a client
 * reaching Tessera directly).
 */
const budget = 3;
const getToken = (tessera: TesseraProcess, account: Credentials, transactionKey: string, forwardedFor: string | undefined, localAddress = '127.0.0.1') =>
  tessera
    .postJson(
      '/v5/Authorization/get-oauth-token',
      { api_login_id: account.api_login_id, transaction_key: transactionKey },
      forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
      { localAddress },
    )
    .then((answer) => answer.status);

/**
 * Forward-auth for a DPoP-bound token (RFC 9449): the proxy passes the client's method and URL,
 * Traefik's way (X-Forwarded-Method, -Proto, -Host, -Uri), and the client's DPoP proof.
 */
async function forwardAuthDpop(tessera: TesseraProcess, account: Credentials, localAddress: string) {
  // From an address no other test spends budgets of.
  const issued = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key }, {}, { localAddress: '127.0.0.9' });
  expect(issued.status).toBe(200);
  const client = await dpopClient();
  const token = boundToKey(String(issued.json().token), client.jkt, tessera.dataDir);
  const called = 'https://shop.example.com/v5/Transaction/charge';
  return {
    proof: () => client.proof('POST', called, token),
    send: (proof: string) =>
      tessera.request('/forward-auth?permission=transaction:charge', {
        headers: {
          authorization: `DPoP ${token}`,
          dpop: proof,
        'x-forwarded-method': 'POST',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'shop.example.com',
          'x-forwarded-uri': '/v5/Transaction/charge?order=7',
        },
        localAddress,
      }),
  };
}

describe('behind a trusted proxy (TESSERA_TRUSTED_PROXIES=127.0.0.1)', () => {
  let tessera: TesseraProcess;
  let account: Credentials;
  beforeAll(async () => {
    tessera = await startTessera({ TESSERA_TRUSTED_PROXIES: '127.0.0.1', TESSERA_THROTTLE_CREDENTIAL_FAILURES: String(budget) });
    account = await tessera.createAccount();
  });
  afterAll(async () => {
    await tessera?.stop();
  });

  it('throttles the forwarded client, not the proxy: another client behind the same proxy still gets its token', async () => {
    for (let attempt = 0; attempt < budget; attempt += 1) expect(await getToken(tessera, account, 'wrong-key', '198.51.100.7')).toBe(401);
    expect(await getToken(tessera, account, account.transaction_key, '198.51.100.7')).toBe(429);
    // Through a second trusted hop, the same client is still the one throttled.
    expect(await getToken(tessera, account, account.transaction_key, '198.51.100.7, 127.0.0.1')).toBe(429);
    expect(await getToken(tessera, account, account.transaction_key, '198.51.100.8')).toBe(200);
  });

  it('ignores X-Forwarded-For from an address it does not trust: the header cannot put a client in another budget', async () => {
    for (let attempt = 0; attempt < budget; attempt += 1) expect(await getToken(tessera, account, 'wrong-key', `203.0.113.${attempt + 1}`, '127.0.0.2')).toBe(401);
    expect(await getToken(tessera, account, account.transaction_key, '203.0.113.99', '127.0.0.2')).toBe(429);
    // Nor can a direct client claim to be a throttled one: 198.51.100.7 is throttled, 127.0.0.3 is not.
    expect(await getToken(tessera, account, account.transaction_key, '198.51.100.7', '127.0.0.3')).toBe(200);
  });

  it('forward-auth checks a DPoP proof against the method and URL a trusted proxy forwards, and believes them from no other peer', async () => {
    const fromProxy = await forwardAuthDpop(tessera, account, '127.0.0.1');
    const passed = await fromProxy.send(await fromProxy.proof());
    expect(passed.status).toBe(200);
    expect(passed.headers['x-tessera-scope']).toBe('transaction:charge');
    // The same headers from a client that reaches the verifier directly are not the client's request.
    const fromElsewhere = await forwardAuthDpop(tessera, account, '127.0.0.2');
    const refused = await fromElsewhere.send(await fromElsewhere.proof());
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/^DPoP error="invalid_dpop_proof", error_description="the request's method and URL are not known here/);
  });

  it('logs the forwarded client as the request\'s remote address', async () => {
    await getToken(tessera, account, account.transaction_key, '198.51.100.42');
    await expect.poll(() => tessera.logs().includes('"remoteAddress":"198.51.100.42"'), { timeout: 5_000 }).toBe(true);
  });
});

/**
 * A trusted range that also holds clients (all of 127.0.0.0/8 here): a client inside it reaches
 * Tessera directly and writes X-Forwarded-For itself. What it writes there must be an address, and
 * rotating it buys no more than the aggregate budget of the hop it comes through.
 */
describe('with a trusted range that also holds clients (TESSERA_TRUSTED_PROXIES=127.0.0.0/8)', () => {
  const hopBudget = 6;
  let tessera: TesseraProcess;
  let account: Credentials;
  beforeAll(async () => {
    tessera = await startTessera({
      TESSERA_TRUSTED_PROXIES: '127.0.0.0/8',
      TESSERA_THROTTLE_CREDENTIAL_FAILURES: String(budget),
      TESSERA_THROTTLE_PROXY_FAILURES: String(hopBudget),
    });
    account = await tessera.createAccount();
  });
  afterAll(async () => {
    await tessera?.stop();
  });

  it('a forwarded value that is not an IP address is not believed: the direct peer\'s budget is spent, however the value rotates', async () => {
    for (let attempt = 0; attempt < budget; attempt += 1) expect(await getToken(tessera, account, 'wrong-key', `not-an-address-${attempt}`, '127.0.0.2')).toBe(401);
    expect(await getToken(tessera, account, account.transaction_key, 'not-an-address-99', '127.0.0.2')).toBe(429);
  });

  it('a forwarded value that is not an IP address reaches neither the log nor the audit trail: the direct peer\'s address does', async () => {
    const forged = 'forged<script>';
    const answer = await tessera.postJson(
      '/v5/Authorization/get-oauth-token',
      { api_login_id: account.api_login_id, transaction_key: account.transaction_key },
      { 'x-forwarded-for': forged },
      { localAddress: '127.0.0.5' },
    );
    expect(answer.status).toBe(200);
    const familyId = (JSON.parse(Buffer.from(String(answer.json().token).split('.')[1]!, 'base64url').toString()) as { fid: string }).fid;
    await expect.poll(() => tessera.logs().includes('"remoteAddress":"127.0.0.5"'), { timeout: 5_000 }).toBe(true);
    const { stdout } = await tessera.tessera(['audit', '--family', familyId, '--format', 'ndjson']);
    const rows = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { type: string; source_address: string });
    expect(rows.map((row) => [row.type, row.source_address])).toEqual([['TokenIssued', '127.0.0.5']]);
    expect(tessera.logs()).not.toContain('forged');
  });

  it('rotating X-Forwarded-For through one hop buys only that hop\'s aggregate budget (TESSERA_THROTTLE_PROXY_FAILURES); another hop is not held back', async () => {
    // Each attempt names another client, so no client's own budget is ever spent: only the hop's.
    for (let attempt = 0; attempt < hopBudget; attempt += 1) expect(await getToken(tessera, account, 'wrong-key', `198.51.100.${attempt + 1}`, '127.0.0.3')).toBe(401);
    const refused = await tessera.postJson(
      '/v5/Authorization/get-oauth-token',
      { api_login_id: account.api_login_id, transaction_key: account.transaction_key },
      { 'x-forwarded-for': '198.51.100.77' },
      { localAddress: '127.0.0.3' },
    );
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.json().detail).toMatch(/through this proxy/);
    expect(await getToken(tessera, account, account.transaction_key, '198.51.100.78', '127.0.0.4')).toBe(200);
    const metrics = (await tessera.adminRequest('/metrics')).text;
    expect(metrics).toMatch(/^tessera_throttled_total\{operation="issue",scope="proxy"\} 1$/m);
  });
});

describe('without TESSERA_TRUSTED_PROXIES', () => {
  let tessera: TesseraProcess;
  let account: Credentials;
  beforeAll(async () => {
    tessera = await startTessera({ TESSERA_THROTTLE_CREDENTIAL_FAILURES: String(budget) });
    account = await tessera.createAccount();
  });
  afterAll(async () => {
    await tessera?.stop();
  });

  it('ignores X-Forwarded-For: a new value in each attempt does not escape the budget of the connecting address', async () => {
    for (let attempt = 0; attempt < budget; attempt += 1) expect(await getToken(tessera, account, 'wrong-key', `198.51.100.${attempt + 1}`)).toBe(401);
    expect(await getToken(tessera, account, account.transaction_key, '198.51.100.200')).toBe(429);
    expect(await getToken(tessera, account, account.transaction_key, undefined, '127.0.0.2')).toBe(200);
  });

  it('forward-auth takes the forwarded method and URL from its caller, the proxy: a proof for them passes once, its replay is refused', async () => {
    const forwardAuth = await forwardAuthDpop(tessera, account, '127.0.0.2');
    const proof = await forwardAuth.proof();
    const passed = await forwardAuth.send(proof);
    expect(passed.status).toBe(200);
    expect(passed.headers['x-tessera-client-id']).toBe(account.api_login_id);
    const replayed = await forwardAuth.send(proof);
    expect(replayed.status).toBe(401);
    expect(replayed.headers['www-authenticate']).toMatch(/^DPoP error="invalid_dpop_proof", error_description="the DPoP proof was used before/);
  });

  it('refuses to start on a malformed value, naming the variable', async () => {
    await expect(startTessera({ TESSERA_TRUSTED_PROXIES: '10.0.0.0/33' })).rejects.toThrow(/TESSERA_TRUSTED_PROXIES/);
  });
});
