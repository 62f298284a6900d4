import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { writeSharedCertificate } from '../support/shared-certificate.js';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Revoke from anywhere, the receiving region's half, through the real all-in-ones: b holds a's
 * family events (the check material) from a's family topic, and while a is stopped it revokes a's
 * families itself, answers 503 for what it cannot prove, and refuses the token at once. One broker
 * stands in for both regions' (a's relay publishes straight to the names MirrorMaker 2 would give
 * its topics in b, as regions-mirroring does); the home region's half (a applies what b recorded
 * on its return) needs b's topics mirrored back to a: `npm run sim:regions` runs it.
 */
const { brokers } = kafkaTestEnvironment('revoke from anywhere e2e');
const base = `t${process.pid}x${Date.now()}r`;
const secret = randomBytes(32).toString('base64url');
const REVOKE = '/v5/Authorization/revoke-oauth-token';
const REFRESH = '/v5/Authorization/refresh-oauth-token';
interface Pair {
  token: string;
  refresh_token: string;
}
const fidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string }).fid;
const metric = async (server: TesseraProcess, series: string) => {
  const line = (await server.adminRequest('/metrics')).text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
};

describe.skipIf(!brokers)('revoke from anywhere: b revokes a\'s families while a is stopped', () => {
  const folders = { a: mkdtempSync(join(tmpdir(), 'tessera-anywhere-a-')), b: mkdtempSync(join(tmpdir(), 'tessera-anywhere-b-')) };
  let a: TesseraProcess;
  let b: TesseraProcess;
  let account: Credentials;
  const pairs: Pair[] = [];

  beforeAll(async () => {
    await writeSharedCertificate(Object.values(folders));
    const [portA, portB] = [await freePort(), await freePort()];
    const common = { TESSERA_KAFKA_BROKERS: brokers!, TESSERA_PEER_SECRET: secret, NODE_EXTRA_CA_CERTS: join(folders.a, 'tls', 'self-signed.crt'), TESSERA_PEER_PROBE_INTERVAL: '0.2' };
    a = await startTessera(
      {
        ...common,
        TESSERA_REGION: 'a',
        TESSERA_PORT: String(portA),
        TESSERA_PEER_REGIONS: `b=https://localhost:${portB}`,
        TESSERA_KAFKA_TOPIC: `a.${base}.revocations`,
        TESSERA_KAFKA_ACCOUNT_TOPIC: `a.${base}.accounts`,
        TESSERA_KAFKA_FAMILY_TOPIC: `a.${base}.families`,
        TESSERA_MIRRORED_REGIONS: 'none',
      },
      { dataDir: folders.a, keepData: true },
    );
    // One secret-hashing key for every region: b checks a's hashes with it.
    mkdirSync(join(folders.b, 'keys'), { recursive: true, mode: 0o700 });
    copyFileSync(join(folders.a, 'keys', 'secret-hashing.key'), join(folders.b, 'keys', 'secret-hashing.key'));
    b = await startTessera(
      {
        ...common,
        TESSERA_REGION: 'b',
        TESSERA_PORT: String(portB),
        TESSERA_PEER_REGIONS: `a=https://localhost:${portA}`,
        TESSERA_KAFKA_TOPIC: `${base}.revocations`,
        TESSERA_KAFKA_ACCOUNT_TOPIC: `${base}.accounts`,
        TESSERA_KAFKA_FAMILY_TOPIC: `${base}.families`,
        TESSERA_MIRRORED_REGIONS: 'a',
      },
      { dataDir: folders.b },
    );
    account = await a.createAccount();
    for (let i = 0; i < 4; i += 1) pairs.push((await a.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as unknown as Pair);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    for (const folder of Object.values(folders)) rmSync(folder, { recursive: true, force: true });
  });

  const charge = (server: TesseraProcess, token: string) => server.request('/forward-auth?permission=transaction:charge', { headers: { authorization: `Bearer ${token}` } });

  it('holds the check material of a\'s families, from a\'s family topic', async () => {
    await expect.poll(() => metric(b, 'tessera_family_check_entries'), { timeout: 15_000, interval: 50 }).toBeGreaterThanOrEqual(pairs.length);
  });

  it('forwards a revoke while a answers: a records it, b records nothing of its own', async () => {
    expect((await b.postJson(REVOKE, { refresh_token: pairs[0]!.refresh_token })).status).toBe(200);
    expect((await charge(a, pairs[0]!.token)).status).toBe(401);
    expect(await metric(b, 'tessera_remote_revocations_total{outcome="recorded"}')).not.toBeGreaterThan(0);
  });

  it('with a stopped, revokes a\'s family in b: 200, refused in b at once, recorded in revocations-<familyId> of b\'s log', async () => {
    a.signal('SIGTERM');
    await a.exited;
    const answer = await b.postJson(REVOKE, { refresh_token: pairs[1]!.refresh_token });
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ revoked: true });
    expect((await charge(b, pairs[1]!.token)).status).toBe(401);
    const store = new SqliteEventStore({ file: join(folders.b, 'events.db') });
    try {
      const recorded = await store.readStream(`revocations-${fidOf(pairs[1]!.token)}`);
      expect(recorded.map(({ event }) => event.type)).toEqual(['TokenRevoked']);
      expect(await store.readStream(`tokenfamily-${fidOf(pairs[1]!.token)}`)).toEqual([]);
    } finally {
      await store.close();
    }
    expect(await metric(b, 'tessera_remote_revocations_total{outcome="recorded"}')).toBe(1);
  });

  it('marks a unreachable, and then answers a refresh of a\'s family 503 at once', async () => {
    await expect.poll(() => metric(b, 'tessera_peer_reachable{region="a"}'), { timeout: 5_000, interval: 50 }).toBe(0);
    const refresh = await b.postJson(REFRESH, { refresh_token: pairs[2]!.refresh_token });
    expect(refresh.status).toBe(503);
    expect(refresh.headers['retry-after']).toBe('5');
  });

  it('answers 503 with Retry-After for what it cannot prove (a forged secret, a family it never heard of), never 200', async () => {
    const forged = await b.postJson(REVOKE, { refresh_token: `tsr_${fidOf(pairs[2]!.token)}.${randomBytes(32).toString('base64url')}` });
    expect(forged.status).toBe(503);
    expect(forged.headers['retry-after']).toBe('5');
    expect(String(forged.headers['content-type'])).toContain('application/problem+json');
    const unknown = await b.postJson(REVOKE, { refresh_token: `tsr_a_${randomBytes(16).toString('base64url')}.${randomBytes(32).toString('base64url')}` });
    expect(unknown.status).toBe(503);
    // The family is live, and its token still works in b: nothing was recorded.
    expect((await charge(b, pairs[2]!.token)).status).toBe(200);
  });

  it('refuses, as home would, any token of a family it has seen revoked, and the revoked token again', async () => {
    expect((await b.postJson(REVOKE, { refresh_token: pairs[1]!.refresh_token })).status).toBe(401);
    expect((await b.postJson(REVOKE, { refresh_token: `tsr_${fidOf(pairs[1]!.token)}.${randomBytes(32).toString('base64url')}` })).status).toBe(401);
    expect(await metric(b, 'tessera_remote_revocations_total{outcome="refused"}')).toBe(2);
  });
});
