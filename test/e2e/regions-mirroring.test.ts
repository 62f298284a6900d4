import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Mirroring, the product's half: region b's all-in-one follows region a's topics as
 * MirrorMaker 2 names them in b (`a.<topic>`), and a's keys, credentials and revocations take
 * effect in b. One broker stands in for both regions' here: a's relay publishes straight to the
 * names MM2 would give its topics in b, so this runs the real relay, the real follower and the
 * real all-in-one without MM2. `npm run sim:regions` runs the same path through two brokers, MM2
 * and Toxiproxy.
 */
const { brokers } = kafkaTestEnvironment('regions mirroring e2e');
const base = `t${process.pid}x${Date.now()}`;
const topics = { revocations: `${base}.revocations`, accounts: `${base}.accounts` };

describe.skipIf(!brokers)('two regions through mirrored topics: a\'s keys, credentials and revocations reach b', () => {
  const folders = { a: mkdtempSync(join(tmpdir(), 'tessera-mirror-a-')), b: mkdtempSync(join(tmpdir(), 'tessera-mirror-b-')) };
  let a: TesseraProcess;
  let b: TesseraProcess;
  let account: Credentials;

  beforeAll(async () => {
    a = await startTessera(
      { TESSERA_REGION: 'a', TESSERA_KAFKA_BROKERS: brokers!, TESSERA_KAFKA_TOPIC: `a.${topics.revocations}`, TESSERA_KAFKA_ACCOUNT_TOPIC: `a.${topics.accounts}`, TESSERA_MIRRORED_REGIONS: 'none' },
      { dataDir: folders.a },
    );
    // Every region hashes secrets with one key, or b could not check a's credentials (docs/multi-region.md).
    mkdirSync(join(folders.b, 'keys'), { recursive: true, mode: 0o700 });
    copyFileSync(join(folders.a, 'keys', 'secret-hashing.key'), join(folders.b, 'keys', 'secret-hashing.key'));
    b = await startTessera(
      { TESSERA_REGION: 'b', TESSERA_KAFKA_BROKERS: brokers!, TESSERA_KAFKA_TOPIC: topics.revocations, TESSERA_KAFKA_ACCOUNT_TOPIC: topics.accounts, TESSERA_MIRRORED_REGIONS: 'a' },
      { dataDir: folders.b },
    );
    account = await a.createAccount();
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    for (const folder of Object.values(folders)) rmSync(folder, { recursive: true, force: true });
  });

  const issueAt = (server: TesseraProcess) =>
    server.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
  const chargeAt = (server: TesseraProcess, token: string) =>
    server.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });

  it('accepts in b a credential created in a, once its account events arrive', async () => {
    await expect.poll(async () => (await issueAt(b)).status, { timeout: 10_000, interval: 50 }).toBe(200);
    const pair = (await issueAt(b)).json() as { token: string };
    // Issued in b, so homed in b.
    expect(JSON.parse(Buffer.from(pair.token.split('.')[1]!, 'base64url').toString('utf8')).fid).toMatch(/^b_/);
  });

  it('verifies in b a token signed in a, and serves a\'s key in b\'s JWKS', async () => {
    const { token } = (await issueAt(a)).json() as { token: string };
    const kid = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')).kid as string;
    await expect.poll(async () => (await chargeAt(b, token)).status, { timeout: 10_000, interval: 50 }).toBe(200);
    const jwks = (await b.request('/.well-known/jwks.json')).json() as { keys: { kid: string }[] };
    expect(jwks.keys.map((key) => key.kid)).toContain(kid);
  });

  it('refuses in b a token revoked in a, and its rotated-away predecessor', async () => {
    const revoked = (await issueAt(a)).json() as { token: string; refresh_token: string };
    const rotated = (await issueAt(a)).json() as { token: string; refresh_token: string };
    await expect.poll(async () => (await chargeAt(b, revoked.token)).status, { timeout: 10_000, interval: 50 }).toBe(200);
    expect((await chargeAt(b, rotated.token)).status).toBe(200);
    expect((await a.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: revoked.refresh_token })).status).toBe(200);
    const next = (await a.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: rotated.refresh_token })).json() as { token: string };
    await expect.poll(async () => (await chargeAt(b, revoked.token)).status, { timeout: 10_000, interval: 20 }).toBe(401);
    await expect.poll(async () => (await chargeAt(b, rotated.token)).status, { timeout: 10_000, interval: 20 }).toBe(401);
    expect((await chargeAt(b, next.token)).status).toBe(200);
  });

  it('refuses in b an account disabled in a: tokens issued in either region, refreshes and new gets; enabled in a, b issues again and the old families stay refused', async () => {
    const shop = await a.createAccount();
    const getAt = (server: TesseraProcess) => server.postJson('/v5/Authorization/get-oauth-token', { api_login_id: shop.api_login_id, transaction_key: shop.transaction_key });
    const refreshAt = async (server: TesseraProcess, refreshToken: string) => (await server.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: refreshToken })).status;
    await expect.poll(async () => (await getAt(b)).status, { timeout: 10_000, interval: 50 }).toBe(200);
    const inA = (await getAt(a)).json() as { token: string };
    const inB = (await getAt(b)).json() as { token: string; refresh_token: string };
    await expect.poll(async () => (await chargeAt(b, inA.token)).status, { timeout: 10_000, interval: 50 }).toBe(200);

    await a.tessera(['accounts', 'disable', '--account', shop.account_id, '--json']);
    // The disable and its cut travel on a's account and revocation topics.
    await expect.poll(async () => (await getAt(b)).status, { timeout: 10_000, interval: 20 }).toBe(401);
    await expect.poll(async () => (await chargeAt(b, inA.token)).status, { timeout: 10_000, interval: 20 }).toBe(401);
    await expect.poll(async () => (await chargeAt(b, inB.token)).status, { timeout: 10_000, interval: 20 }).toBe(401);
    expect(await refreshAt(b, inB.refresh_token)).toBe(401);

    await a.tessera(['accounts', 'enable', '--account', shop.account_id, '--json']);
    await expect.poll(async () => (await getAt(b)).status, { timeout: 10_000, interval: 20 }).toBe(200);
    // b's own family was not revoked by a (a's log does not hold it), yet it does not come back.
    expect(await refreshAt(b, inB.refresh_token)).toBe(401);
    expect((await chargeAt(b, inA.token)).status).toBe(401);
  });

  it('reports what it applied from the mirror on /metrics', async () => {
    const metrics = await b.adminRequest('/metrics');
    const applied = Number(/^tessera_mirrored_events_applied_total (\d+)/m.exec(metrics.text)?.[1]);
    expect(applied).toBeGreaterThan(0);
    expect((await a.adminRequest('/metrics')).text).toMatch(/^tessera_account_relay_published_total [1-9]/m);
  });

  it('a standalone issuer in b (tessera issuer) authenticates a\'s credential and serves a\'s key', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tessera-mirror-b-issuer-'));
    mkdirSync(join(folder, 'keys'), { recursive: true, mode: 0o700 });
    copyFileSync(join(folders.a, 'keys', 'secret-hashing.key'), join(folder, 'keys', 'secret-hashing.key'));
    const issuer = await startTessera(
      { TESSERA_REGION: 'b', TESSERA_KAFKA_BROKERS: brokers!, TESSERA_KAFKA_TOPIC: topics.revocations, TESSERA_KAFKA_ACCOUNT_TOPIC: topics.accounts, TESSERA_MIRRORED_REGIONS: 'a' },
      { dataDir: folder, command: 'issuer' },
    );
    try {
      await expect.poll(async () => (await issueAt(issuer)).status, { timeout: 10_000, interval: 50 }).toBe(200);
      const { token } = (await issueAt(a)).json() as { token: string };
      const kid = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')).kid as string;
      await expect
        .poll(async () => ((await issuer.request('/.well-known/jwks.json')).json() as { keys: { kid: string }[] }).keys.map((key) => key.kid), { timeout: 10_000, interval: 50 })
        .toContain(kid);
    } finally {
      await issuer.stop();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('a Kafka-fed verifier in b (tessera verifier) learns a\'s key and revocations from the mirrored topic alone', async () => {
    const verifier = await startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers!,
        TESSERA_KAFKA_TOPIC: topics.revocations,
        TESSERA_KAFKA_ACCOUNT_TOPIC: topics.accounts,
        TESSERA_VERIFIER_SOURCE: 'kafka',
        TESSERA_MIRRORED_REGIONS: 'a',
        // No store and no JWKS: whatever it knows of a comes through the mirrored topic.
        TESSERA_EVENT_STORE: 'sqlite:/nonexistent/must-not-be-opened.db',
      },
      { command: 'verifier' },
    );
    try {
      const pair = (await issueAt(a)).json() as { token: string; refresh_token: string };
      await expect.poll(async () => (await chargeAt(verifier, pair.token)).status, { timeout: 10_000, interval: 50 }).toBe(200);
      expect((await a.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token })).status).toBe(200);
      await expect.poll(async () => (await chargeAt(verifier, pair.token)).status, { timeout: 10_000, interval: 20 }).toBe(401);

      // An account disabled in a: its live token is refused through the disable's cut on the revocation topic.
      const disabled = await a.createAccount();
      const live = (await a.postJson('/v5/Authorization/get-oauth-token', { api_login_id: disabled.api_login_id, transaction_key: disabled.transaction_key })).json() as { token: string };
      await expect.poll(async () => (await chargeAt(verifier, live.token)).status, { timeout: 10_000, interval: 50 }).toBe(200);
      await a.tessera(['accounts', 'disable', '--account', disabled.account_id, '--json']);
      await expect.poll(async () => (await chargeAt(verifier, live.token)).status, { timeout: 10_000, interval: 20 }).toBe(401);
    } finally {
      await verifier.stop();
    }
  });

  it('is not ready while a mirrored topic does not exist, and names it', async () => {
    const lonely = await startTessera(
      { TESSERA_REGION: 'c', TESSERA_KAFKA_BROKERS: brokers!, TESSERA_KAFKA_TOPIC: `${base}.lonely`, TESSERA_KAFKA_ACCOUNT_TOPIC: `${base}.lonely-accounts`, TESSERA_MIRRORED_REGIONS: 'z' },
      { until: 'listening' },
    );
    try {
      await expect
        .poll(async () => (await lonely.adminRequest('/readyz')).text, { timeout: 10_000, interval: 100 })
        .toContain(`mirrored topic z.${base}.lonely does not exist yet`);
      expect((await lonely.adminRequest('/readyz')).status).toBe(503);
    } finally {
      await lonely.stop();
    }
  });
});
