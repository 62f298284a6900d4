import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { writeSharedCertificate } from '../support/shared-certificate.js';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * Another region's revocations reach this region's Shared Signals receivers like local ones,
 * through the real all-in-ones: a revokes a family and cuts an account; b, which follows a's
 * topics, records each once in its own log and its polled stream hands the SETs to its receiver.
 * One broker stands in for both regions' (a's relay publishes straight to the names MirrorMaker 2
 * would give its topics in b, as regions-mirroring does).
 */
const { brokers } = kafkaTestEnvironment('Shared Signals across regions e2e');
const base = `t${process.pid}x${Date.now()}s`;
const SESSION_REVOKED = 'https://schemas.openid.net/secevent/caep/event-type/session-revoked';

interface Set {
  readonly txn: string;
  readonly sub_id: { format: string; user?: { sub: string }; session?: { id: string } };
  readonly events: Record<string, { initiating_entity?: string; reason_admin?: { en: string } }>;
}
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Set;
const fidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string }).fid;

describe.skipIf(!brokers)("another region's revocations reach this region's Shared Signals receivers", () => {
  const folders = { a: mkdtempSync(join(tmpdir(), 'tessera-ssf-region-a-')), b: mkdtempSync(join(tmpdir(), 'tessera-ssf-region-b-')) };
  const secret = randomBytes(32).toString('base64url');
  let a: TesseraProcess;
  let b: TesseraProcess;
  let bEnv: Record<string, string>;
  let account: Credentials;
  let receiverToken = '';
  let streamId = '';

  const poll = async (server: TesseraProcess, body: Record<string, unknown>) => {
    const answer = await server.request(`/ssf/poll?stream_id=${streamId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${receiverToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(200);
    return answer.json() as { sets: Record<string, string>; moreAvailable: boolean };
  };
  /** Polls until `count` SETs are waiting (each poll waits up to TESSERA_SSF_POLL_WAIT), then acknowledges them. */
  const receive = async (server: TesseraProcess, count: number): Promise<Set[]> => {
    const received = new Map<string, string>();
    await until(
      async () => {
        for (const [jti, jwt] of Object.entries((await poll(server, { returnImmediately: false, maxEvents: 10 })).sets)) received.set(jti, jwt);
        return received.size >= count;
      },
      `${count} SETs waiting`,
      { timeoutMs: 60_000, everyMs: 0 },
    );
    await poll(server, { ack: [...received.keys()], returnImmediately: true });
    return [...received.values()].map(claimsOf);
  };

  beforeAll(async () => {
    await writeSharedCertificate(Object.values(folders));
    const [portA, portB] = [await freePort(), await freePort()];
    const common = { TESSERA_KAFKA_BROKERS: brokers!, TESSERA_PEER_SECRET: secret, NODE_EXTRA_CA_CERTS: join(folders.a, 'tls', 'self-signed.crt'), TESSERA_SSF_POLL_WAIT: '1' };
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
      { dataDir: folders.a },
    );
    mkdirSync(join(folders.b, 'keys'), { recursive: true, mode: 0o700 });
    copyFileSync(join(folders.a, 'keys', 'secret-hashing.key'), join(folders.b, 'keys', 'secret-hashing.key'));
    bEnv = {
      ...common,
      TESSERA_REGION: 'b',
      TESSERA_PORT: String(portB),
      TESSERA_PUBLIC_URL: `https://localhost:${portB}`,
      TESSERA_PEER_REGIONS: `a=https://localhost:${portA}`,
      TESSERA_KAFKA_TOPIC: `${base}.revocations`,
      TESSERA_KAFKA_ACCOUNT_TOPIC: `${base}.accounts`,
      TESSERA_KAFKA_FAMILY_TOPIC: `${base}.families`,
      TESSERA_MIRRORED_REGIONS: 'a',
    };
    b = await startTessera(bEnv, { dataDir: folders.b, keepData: true });
    account = await a.createAccount();
    receiverToken = (JSON.parse((await b.tessera(['ssf-receivers', 'create', '--name', 'regional receiver', '--json'])).stdout) as { token: string }).token;
    const headers = { authorization: `Bearer ${receiverToken}`, 'content-type': 'application/json' };
    // The receiver was created by the CLI; the server reads it from the log within a poll.
    const { answer: created } = await until(() => b.request('/ssf/streams', { method: 'POST', headers, body: JSON.stringify({ delivery: { method: 'urn:ietf:rfc:8936' } }) }), 'the receiver token to be read', {
      done: (answer) => answer.status !== 401,
      timeoutMs: 5_000,
    });
    expect(created.status).toBe(201);
    streamId = (created.json() as { stream_id: string }).stream_id;
    const subject = { stream_id: streamId, subject: { format: 'iss_sub', iss: `https://localhost:${portB}`, sub: account.account_id } };
    expect((await b.request('/ssf/subjects/add', { method: 'POST', headers, body: JSON.stringify(subject) })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    for (const folder of Object.values(folders)) rmSync(folder, { recursive: true, force: true });
  });

  it("a family a revokes: b's receiver gets a session-revoked naming region a, with a's event as txn", async () => {
    const pair = (await a.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as { token: string; refresh_token: string };
    expect((await a.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token })).status).toBe(200);
    const [set, ...more] = await receive(b, 1);
    expect(more).toEqual([]);
    expect(set!.sub_id).toMatchObject({ format: 'complex', user: { sub: account.account_id }, session: { id: fidOf(pair.token) } });
    expect(set!.events[SESSION_REVOKED]).toEqual({ event_timestamp: expect.any(Number), initiating_entity: 'system', reason_admin: { en: 'revoked in region a' }, tessera_rejects_until: expect.any(Number) });
    expect(set!.txn).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("an account cut in a: b's receiver gets it for the account subject, once", async () => {
    await a.tessera(['accounts', 'set-permissions', '--account', account.account_id, '--permission', 'transaction:charge', '--revoke-tokens']);
    const sets = await receive(b, 1);
    expect(sets).toHaveLength(1);
    expect(sets[0]!.sub_id).toEqual({ format: 'complex', user: expect.objectContaining({ sub: account.account_id }) });
    expect(sets[0]!.events[SESSION_REVOKED]!.reason_admin!.en).toMatch(/\(in region a\)$/);
  });

  it('after a restart, which reads a\'s topics again from their start, b records nothing twice', async () => {
    await b.stop();
    b = await startTessera(bEnv, { dataDir: folders.b, keepData: true });
    const metric = async (series: string) => {
      const line = (await b.adminRequest('/metrics')).text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
      return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
    };
    // Read back through a's revocation topic: both events are applied again, and neither is recorded.
    await until(() => metric('tessera_mirrored_events_applied_total'), 'both events applied again from a\'s topic', { done: (applied) => applied >= 2, timeoutMs: 30_000, everyMs: 200 });
    // A long poll (TESSERA_SSF_POLL_WAIT, 1 s) gives a second recording the time to happen and be sent.
    expect((await poll(b, { returnImmediately: false })).sets).toEqual({});
    expect(await metric('tessera_ssf_mirrored_revocations_total')).toBe(0);
  });
});
