import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSsfReceiver, type SsfReceiver } from './ssf-receiver.js';
import { ssfEventTypes } from './ssf-set-mapping.js';

/**
 * The poll loop (RFC 8936) against a transmitter on a real socket that serves the metadata, the
 * JWKS, stream management and a poll endpoint whose answers the test queues, recording each poll
 * request (its ack and setErrs) as Tessera would receive it.
 */
interface PollRequest {
  readonly ack: string[];
  readonly setErrs: Record<string, { err: string }>;
  readonly returnImmediately: boolean;
}

let transmitter: Server;
let issuer = '';
let signingKey: CryptoKey;
let publicJwk: JWK;
let verificationState = '';
let polls: PollRequest[] = [];
/** What the next polls answer, in order; once empty, an empty answer after 50 ms (a short long poll). */
let answers: ({ status: number; retryAfter?: string } | { sets: Record<string, string>; moreAvailable: boolean })[] = [];
/** When each poll reached the transmitter (performance.now(), ms), and the status it was answered. */
let pollTimes: { at: number; status: number }[] = [];
let work = '';
let receiver: SsfReceiver | undefined;
const aud = 'urn:tessera:ssf:receiver:r1:stream-1';

beforeEach(async () => {
  const pair = await generateKeyPair('ES256');
  signingKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'key-1', alg: 'ES256' };
  polls = [];
  pollTimes = [];
  answers = [];
  verificationState = '';
  work = mkdtempSync(join(tmpdir(), 'ssf-poll-'));
  transmitter = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = chunks.length === 0 ? {} : (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      const json = (status: number, answer: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      const path = new URL(request.url!, issuer).pathname;
      if (path === '/.well-known/ssf-configuration') {
        return json(200, { issuer, jwks_uri: `${issuer}/jwks`, configuration_endpoint: `${issuer}/ssf/streams`, add_subject_endpoint: `${issuer}/ssf/subjects/add`, verification_endpoint: `${issuer}/ssf/verify` });
      }
      if (path === '/jwks') return json(200, { keys: [publicJwk] });
      if (path === '/ssf/streams') return json(201, { stream_id: 'stream-1', aud, delivery: { method: 'urn:ietf:rfc:8936', endpoint_url: `${issuer}/ssf/poll?stream_id=stream-1` } });
      if (path === '/ssf/subjects/add') return json(200, {});
      if (path === '/ssf/verify') {
        verificationState = body.state as string;
        return response.writeHead(204).end();
      }
      if (path === '/ssf/poll') {
        polls.push(body as unknown as PollRequest);
        const next = answers.shift();
        pollTimes.push({ at: performance.now(), status: next !== undefined && 'status' in next ? next.status : 200 });
        if (next === undefined) return setTimeout(() => json(200, { sets: {}, moreAvailable: false }), 50);
        if ('status' in next) {
          if (next.retryAfter !== undefined) response.setHeader('retry-after', next.retryAfter);
          return json(next.status, { detail: 'unavailable' });
        }
        return json(200, next);
      }
      return json(404, {});
    });
  });
  await new Promise<void>((resolve) => transmitter.listen(0, '127.0.0.1', resolve));
  const address = transmitter.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP port');
  issuer = `http://127.0.0.1:${address.port}`;
});

afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
  await new Promise<void>((resolve) => transmitter.close(() => resolve()));
  rmSync(work, { recursive: true, force: true });
});

const now = () => Math.floor(Date.now() / 1000);
const sign = (claims: { sub_id: unknown; events: Record<string, unknown> }, key: CryptoKey = signingKey) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'secevent+jwt', kid: 'key-1' }).setIssuer(issuer).setAudience(aud).setIssuedAt().setJti(`j-${Math.random()}`).sign(key);
const familyRevoked = (family: string, key?: CryptoKey) =>
  sign(
    { sub_id: { format: 'complex', user: { format: 'iss_sub', iss: issuer, sub: 'acct' }, session: { format: 'opaque', id: family } }, events: { [ssfEventTypes.sessionRevoked]: { event_timestamp: now(), tessera_rejects_until: now() + 600 } } },
    key,
  );

const start = (stateFile?: string) => {
  receiver = createSsfReceiver({ transmitterUrl: issuer, receiverToken: 'tss_r', delivery: { method: 'poll' }, subjects: { accounts: ['acct'] }, ...(stateFile === undefined ? {} : { stateFile }) });
  return receiver;
};

describe('the poll loop', () => {
  it('acknowledges what it applied and reports setErrs for what it refused, in the next poll; ready once verified and caught up', async () => {
    const forger = (await generateKeyPair('ES256')).privateKey;
    const started = start();
    await expect.poll(() => verificationState).not.toBe('');
    answers.push({
      sets: {
        'jti-verify': await sign({ sub_id: { format: 'opaque', id: 'stream-1' }, events: { [ssfEventTypes.verification]: { state: verificationState } } }),
        'jti-good': await familyRevoked('fam-good'),
        'jti-forged': await familyRevoked('fam-forged', forger),
      },
      moreAvailable: false,
    });
    await started.ready;
    expect(started.projection.isRejected('fam-good', 0)).toBe(true);
    expect(started.projection.isRejected('fam-forged', 0)).toBe(false);
    expect(polls[0]).toEqual({ maxEvents: 100, returnImmediately: false, ack: [], setErrs: {} });
    await expect.poll(() => polls.some((poll) => poll.ack.length > 0)).toBe(true);
    const next = polls.find((poll) => poll.ack.length > 0)!;
    expect(next.ack.sort()).toEqual(['jti-good', 'jti-verify']);
    expect(next.setErrs).toEqual({ 'jti-forged': { err: 'invalid_request', description: 'the SET signature does not verify' } });
  });

  it('is not ready while the transmitter says more is available, and sends an acknowledgment again after a failed poll', async () => {
    const started = start();
    await expect.poll(() => verificationState).not.toBe('');
    const verification = await sign({ sub_id: { format: 'opaque', id: 'stream-1' }, events: { [ssfEventTypes.verification]: { state: verificationState } } });
    answers.push({ sets: { v: verification }, moreAvailable: true }, { status: 503 });
    let ready = false;
    void started.ready.then(() => (ready = true));
    // The poll acknowledging the verification SET failed: the receiver backs off 250 ms before the next.
    await expect.poll(() => polls.filter((poll) => poll.ack.includes('v')).length).toBe(1);
    expect(ready).toBe(false);
    answers.push({ sets: { a: await familyRevoked('fam-late') }, moreAvailable: false });
    await started.ready;
    expect(started.projection.isRejected('fam-late', 0)).toBe(true);
    expect(polls.filter((poll) => poll.ack.includes('v')).length).toBe(2);
  });

  it('closed before it is ready: ready rejects with an AbortError, and no poll follows', async () => {
    // Counted as the receiver sends them: a poll sent before the close may reach the server after it.
    let pollsSent = 0;
    const counting: typeof fetch = (input, init) => {
      if (String(input).includes('/ssf/poll')) pollsSent += 1;
      return fetch(input, init);
    };
    receiver = createSsfReceiver({ transmitterUrl: issuer, receiverToken: 'tss_r', delivery: { method: 'poll' }, subjects: { accounts: ['acct'] }, fetch: counting });
    const started = receiver;
    await expect.poll(() => verificationState).not.toBe('');
    await started.close();
    await expect(started.ready).rejects.toMatchObject({ name: 'AbortError' });
    const after = pollsSent;
    // The loop's backoff is 250 ms at first: a loop still running would have sent another by then.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(pollsSent).toBe(after);
  });

  it('backs off while polls fail: a handful of requests in a second, not a hot loop', async () => {
    start();
    await expect.poll(() => verificationState).not.toBe('');
    answers.push(...Array.from({ length: 100 }, () => ({ status: 503 })));
    await expect.poll(() => polls.length).toBeGreaterThanOrEqual(1);
    const first = polls.length;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // 250 ms, 500 ms, then 1 s between polls: at most three more in the second.
    expect(polls.length - first).toBeGreaterThanOrEqual(1);
    expect(polls.length - first).toBeLessThanOrEqual(3);
  });

  it("refused 429 with Retry-After, asks again only once the transmitter's wait has passed, not after its own 250 ms backoff", async () => {
    start();
    await expect.poll(() => verificationState).not.toBe('');
    answers.push({ status: 429, retryAfter: '2' });
    const refused = () => pollTimes.findIndex((poll) => poll.status === 429);
    await expect.poll(refused).toBeGreaterThanOrEqual(0);
    await expect.poll(() => pollTimes.length, { timeout: 5_000 }).toBeGreaterThan(refused() + 1);
    const waited = pollTimes[refused() + 1]!.at - pollTimes[refused()]!.at;
    expect(waited).toBeGreaterThanOrEqual(1_950);
    expect(waited).toBeLessThan(3_000);
  });

  it('a state file with a torn last line: what was written whole is applied at start, and expired entries are compacted away', async () => {
    const stateFile = join(work, 'state.jsonl');
    const kept = { revocation: { type: 'TokenRevoked', familyId: 'fam-kept', generation: 0, rejectsUntil: now() + 600, accessExpiresAt: now() + 600 } };
    const expired = { revocation: { type: 'TokenRevoked', familyId: 'fam-expired', generation: 0, rejectsUntil: now() - 3_600, accessExpiresAt: now() - 3_600 } };
    appendFileSync(stateFile, `${JSON.stringify(expired)}\n${JSON.stringify(kept)}\n{"revocation":{"type":"TokenRev`);
    const started = start(stateFile);
    await expect.poll(() => started.projection.isRejected('fam-kept', 0)).toBe(true);
    expect(started.projection.isRejected('fam-expired', 0)).toBe(false);
    await expect.poll(() => readFileSync(stateFile, 'utf8')).toContain('"stream"');
    const lines = readFileSync(stateFile, 'utf8').trim().split('\n');
    expect(lines.some((line) => line.includes('fam-expired'))).toBe(false);
    // The torn line is gone with the compaction: every line left is whole.
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    expect(lines.filter((line) => line.includes('fam-kept'))).toHaveLength(1);
  });
});
