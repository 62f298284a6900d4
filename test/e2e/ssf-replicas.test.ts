import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * Shared Signals with two `tessera issuer` replicas on one log (one data folder, a keys folder each,
 * as test/e2e/oauth-dpop-replicas.test.ts runs them): one replica holds the delivery lease
 * (`ssfdelivery`) and delivers every stream; the other forwards polls to it. A 3 s lease
 * (TESSERA_SSF_LEASE_TTL=3) so that a takeover after a kill takes seconds, not 30.
 */
const publicUrl = 'https://ssf.replicas.test';
const ttlMs = 3_000;
const SESSION_REVOKED = 'https://schemas.openid.net/secevent/caep/event-type/session-revoked';

interface Replica {
  readonly name: 'a' | 'b';
  readonly keysDir: string;
  process: TesseraProcess;
}

/** A push receiver (RFC 8935) on this machine: answers 202 and counts every SET it gets by jti. */
class PushReceiver {
  readonly received: { jti: string; sessionId: string | undefined }[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        // The SET's claims only: its signature is checked by the Python receiver of shared-signals.test.ts.
        const claims = decodeJwt(Buffer.concat(chunks).toString('utf8'));
        // A SET's claims are whatever the transmitter sent: only the two read here are narrowed.
        const events = claims.events as Record<string, unknown> | undefined;
        const subject = claims.sub_id as { session?: { id: string } } | undefined;
        this.received.push({ jti: String(claims.jti), sessionId: events?.[SESSION_REVOKED] === undefined ? undefined : subject?.session?.id });
        response.writeHead(202).end();
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  }

  /** How often each jti arrived. */
  counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { jti } of this.received) counts.set(jti, (counts.get(jti) ?? 0) + 1);
    return counts;
  }

  sessions(): Set<string> {
    return new Set(this.received.flatMap(({ sessionId }) => (sessionId === undefined ? [] : [sessionId])));
  }

  close(): void {
    this.server?.closeAllConnections();
    this.server?.close();
  }
}

let dataDir: string;
const replicas: Replica[] = [];
let account: Credentials;
let receiverToken = '';
const receiver = new PushReceiver();
let pushStreamId = '';
const env = { TESSERA_PUBLIC_URL: publicUrl, TESSERA_SSF_LEASE_TTL: String(ttlMs / 1000), TESSERA_EGRESS_ALLOW: 'localhost,127.0.0.1', TESSERA_SSF_POLL_WAIT: '1', TESSERA_SSF_PUSH_TIMEOUT: '2' };

const start = (replica: Pick<Replica, 'name' | 'keysDir'>) => startTessera({ ...env, TESSERA_KEYS_DIR: replica.keysDir }, { command: 'issuer', dataDir, keepData: true });
const other = (replica: Replica) => replicas.find((candidate) => candidate !== replica)!;

/** The times (epoch ms, from its JSON log) at which a replica took the lease, with the epoch. */
function takings(replica: Replica): { epoch: number; time: number }[] {
  return replica.process
    .logs()
    .split('\n')
    .filter((line) => line.includes('took the Shared Signals delivery lease'))
    .map((line) => JSON.parse(line) as { epoch: number; time: number });
}
function logTime(replica: Replica, message: string): number | undefined {
  const line = replica.process
    .logs()
    .split('\n')
    .find((candidate) => candidate.includes(message));
  return line === undefined ? undefined : (JSON.parse(line) as { time: number }).time;
}
/** The replica whose latest taking has the highest epoch: the holder, once each has read the log. */
function holder(): Replica {
  const latest = (replica: Replica) => Math.max(0, ...takings(replica).map(({ epoch }) => epoch));
  return latest(replicas[0]!) > latest(replicas[1]!) ? replicas[0]! : replicas[1]!;
}

const receiverRequest = (replica: Replica, method: string, path: string, body?: unknown) =>
  replica.process.request(path, {
    method,
    headers: { authorization: `Bearer ${receiverToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** A family of the account, issued and revoked at `replica`: its id is the session of the SET. */
async function revokeFamily(replica: Replica): Promise<string> {
  const pair = await replica.process.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
  expect(pair.status).toBe(200);
  const refreshToken = (pair.json() as { refresh_token: string }).refresh_token;
  expect((await replica.process.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: refreshToken })).status).toBe(200);
  return refreshToken.slice('tsr_'.length).split('.')[0]!;
}

/** At `replica`, once its read of the log has the stream made at the other (a 404 until then). */
async function followAccount(replica: Replica, streamId: string): Promise<void> {
  const added = (await until(() => receiverRequest(replica, 'POST', '/ssf/subjects/add', { stream_id: streamId, subject: { format: 'iss_sub', iss: publicUrl, sub: account.account_id } }), `replica ${replica.name} to know the stream`, { done: (answer) => answer.status !== 404 })).answer;
  expect(added.status).toBe(200);
}

async function deliveredBy(replica: Replica, streamId: string): Promise<number> {
  const metrics = (await replica.process.adminRequest('/metrics')).text;
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`tessera_ssf_delivered_total{stream_id="${streamId}"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-e2e-ssf-replicas-'));
  for (const name of ['a', 'b'] as const) {
    const keysDir = mkdtempSync(join(dataDir, `keys-${name}-`));
    // One after the other: the first makes the shared data folder's TLS certificate, which both serve.
    replicas.push({ name, keysDir, process: await start({ name, keysDir }) });
  }
  const [a, b] = replicas as [Replica, Replica];
  account = await a.process.createAccount();
  receiverToken = JSON.parse((await a.process.tessera(['ssf-receivers', 'create', '--name', 'replicas receiver', '--json'])).stdout).token as string;
  for (const replica of [a, b]) await until(async () => (await receiverRequest(replica, 'GET', '/ssf/streams')).status === 200, `replica ${replica.name} to accept the receiver token`);
  const endpoint = await receiver.start();
  const created = await receiverRequest(a, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: endpoint } });
  expect(created.status).toBe(201);
  pushStreamId = (created.json() as { stream_id: string }).stream_id;
  await followAccount(b, pushStreamId);
  // The first stream starts the lease: one replica takes it at once (no lease event in the log yet).
  await until(async () => takings(a).length + takings(b).length > 0, 'a replica to take the delivery lease', { timeoutMs: 10_000 });
}, 120_000);

/** What the run measured, printed at the end. */
const measured: string[] = [];

afterAll(async () => {
  if (measured.length > 0) console.log(`\nShared Signals replicas, measured (TESSERA_SSF_LEASE_TTL=${ttlMs / 1000}):\n${measured.map((line) => `  ${line}`).join('\n')}\n`);
  receiver.close();
  for (const replica of replicas) await replica.process.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('Shared Signals with two issuer replicas on one log', () => {
  it('pushes every SET exactly once while both replicas run, whichever replica the revocations went through', async () => {
    const sessions: string[] = [];
    for (let index = 0; index < 8; index += 1) sessions.push(await revokeFamily(replicas[index % 2]!));
    await until(async () => sessions.every((session) => receiver.sessions().has(session)), 'every revocation to arrive at the receiver', { timeoutMs: 20_000 });
    // The holder's own count of what it delivered reaches what arrived; the other replica delivered nothing.
    const deliverer = holder();
    await until(async () => (await deliveredBy(deliverer, pushStreamId)) === receiver.received.length, "the holder's delivered count to reach the receiver's", { timeoutMs: 10_000 });
    expect(await deliveredBy(other(deliverer), pushStreamId)).toBe(0);
    expect([...receiver.counts().values()].filter((count) => count > 1)).toEqual([]);
    expect(takings(other(deliverer))).toEqual([]);
  }, 60_000);

  it('answers polls at either replica and takes an acknowledgment at the other: an acknowledged SET is never answered again', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const created = await receiverRequest(b, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } });
    expect(created.status).toBe(201);
    const streamId = (created.json() as { stream_id: string }).stream_id;
    await followAccount(a, streamId);
    const poll = async (replica: Replica, body: Record<string, unknown>) => {
      // A 503 (Retry-After: 1) says the holder is changing hands, as on a busy machine a 3 s lease can; a 429 (Retry-After: 1, the
      // default TESSERA_SSF_EMPTY_POLL_INTERVAL) that the stream answered nothing less than a second ago: each asked again after it, as receivers do.
      const { answer } = await until(() => receiverRequest(replica, 'POST', `/ssf/poll?stream_id=${streamId}`, { returnImmediately: true, ...body }), `a poll at replica ${replica.name} answered`, {
        done: (candidate) => candidate.status !== 503 && candidate.status !== 429,
        everyMs: 1_000,
      });
      expect(answer.status, answer.text).toBe(200);
      return Object.keys((answer.json() as { sets: Record<string, string> }).sets);
    };
    for (const [pollAt, ackAt] of [
      [b, a],
      [a, b],
    ] as const) {
      await revokeFamily(pollAt);
      const { answer: answered } = await until(() => poll(pollAt, {}), `a SET polled at replica ${pollAt.name}`, { done: (jtis) => jtis.length > 0, timeoutMs: 10_000 });
      const afterAck = await poll(ackAt, { ack: answered });
      expect(afterAck.filter((jti) => answered.includes(jti))).toEqual([]);
      expect((await poll(pollAt, {})).filter((jti) => answered.includes(jti))).toEqual([]);
    }
    // The status of a stream is answered at either replica too (the non-holder forwards it).
    for (const replica of [a, b]) expect((await receiverRequest(replica, 'GET', `/ssf/status?stream_id=${streamId}`)).status).toBe(200);
    // A request forwarded once is never forwarded again: at a replica that does not hold the lease, 503.
    const twice = await other(holder()).process.request(`/ssf/status?stream_id=${streamId}`, { headers: { authorization: `Bearer ${receiverToken}`, 'tessera-ssf-forwarded': '1' } });
    expect(twice.status).toBe(503);
    expect(twice.headers['retry-after']).toBe('1');
    expect(twice.headers['content-type']).toContain('application/problem+json');
  }, 60_000);

  it('a holder stopped gracefully releases the lease: the other takes it over at once, well before the TTL', async () => {
    const stopped = holder();
    const successor = other(stopped);
    const epochBefore = Math.max(...takings(stopped).map(({ epoch }) => epoch));
    const signalledAt = Date.now();
    await stopped.process.stop();
    await until(async () => takings(successor).some(({ epoch }) => epoch > epochBefore), 'the other replica to take the released lease', { timeoutMs: 10_000 });
    const releasedAt = logTime(stopped, 'released the Shared Signals delivery lease');
    const takenAt = takings(successor).find(({ epoch }) => epoch > epochBefore)!.time;
    expect(releasedAt).toBeDefined();
    // Taken within a read of the log (every TTL/6) of the release, not a TTL after the last renewal.
    expect(takenAt - releasedAt!).toBeLessThan(ttlMs / 2);
    expect(takenAt - signalledAt).toBeLessThan(ttlMs);
    measured.push(`graceful stop: taken ${takenAt - releasedAt!} ms after the release, ${takenAt - signalledAt} ms after SIGTERM`);
    stopped.process = await start(stopped);
    // Restarted, it finds the other holding the lease, and waits.
    await until(async () => (await receiverRequest(stopped, 'GET', '/ssf/streams')).status === 200, 'the restarted replica to serve the receiver');
    expect(takings(stopped)).toEqual([]);
  }, 60_000);

  it('a holder killed (-9) while revocations go on at the other replica: after takeover every SET arrives, at most one per stream twice', async () => {
    const killed = holder();
    const survivor = other(killed);
    const epochBefore = Math.max(...takings(killed).map(({ epoch }) => epoch));
    const arrivedBefore = receiver.received.length;
    const sessions: string[] = [];
    let killedAt = 0;
    // Revocations at the survivor a little more than a second apart, the holder killed among them.
    // The holder records its checkpoint at most once a second, within a second of a delivery: so at
    // the kill at most one delivered SET is not yet recorded (the one in flight, or just answered).
    for (let index = 0; index < 8; index += 1) {
      sessions.push(await revokeFamily(survivor));
      if (index === 2) {
        await until(async () => sessions.every((session) => receiver.sessions().has(session)), 'the revocations before the kill to arrive');
        process.kill(killed.process.pid, 'SIGKILL');
        killedAt = Date.now();
        // Until the survivor takes over, the holder it knows is out of reach: 503 with Retry-After, never a 500.
        const unreachable = await receiverRequest(survivor, 'GET', `/ssf/status?stream_id=${pushStreamId}`);
        expect(unreachable.status).toBe(503);
        expect(unreachable.headers['retry-after']).toBe('1');
      }
      await new Promise((resolve) => setTimeout(resolve, 1_200));
    }
    await until(async () => takings(survivor).some(({ epoch }) => epoch > epochBefore), 'the survivor to take the lease', { timeoutMs: 15_000 });
    await until(async () => sessions.every((session) => receiver.sessions().has(session)), 'every revocation to arrive after the takeover', { timeoutMs: 20_000 });
    const takenAt = takings(survivor).find(({ epoch }) => epoch > epochBefore)!.time;
    // The lease expires a TTL after the survivor last saw the killed holder write, read every TTL/6.
    expect(takenAt - killedAt).toBeLessThan(ttlMs + ttlMs / 2 + 1_000);
    // At-least-once: a SET the killed holder had pushed (the receiver answered 200) but not yet
    // recorded is pushed again by the new holder, under the same jti. One stream here: at most one.
    const duplicated = [...receiver.counts()].filter(([, count]) => count > 1);
    expect(duplicated.length).toBeLessThanOrEqual(1);
    for (const [, count] of duplicated) expect(count).toBe(2);
    expect(receiver.received.length).toBeGreaterThan(arrivedBefore);
    measured.push(`kill -9: taken ${takenAt - killedAt} ms after the kill; ${duplicated.length} SET delivered twice of ${receiver.counts().size}`);
    const lapses = replicas.map((replica) => replica.process.logs().split('\n').filter((line) => line.includes('could not renew the Shared Signals delivery lease')).length);
    measured.push(`holdings that lapsed (renewals too slow for the 3 s lease), per replica: ${lapses.join(', ')}`);
  }, 90_000);
});
