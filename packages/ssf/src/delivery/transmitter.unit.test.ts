import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ssfStreams, streams, type SsfStreamConfiguration, type SsfStreamEvent, type TesseraEvent } from '@tessera/events';
import { InMemoryEventStore, handleCommand } from '@tessera/event-store';
import { ManualClock, ManualScheduler, systemClock, type Scheduler } from '@tessera/timing';
import { createSecretHasher, generateSigningKey, signingKeyFromJwk, singleKeyHashers, type SigningKey } from '@tessera/tokens';
import { egressPolicy } from '@tessera/egress';
import { eventsSupported } from '../event-types.js';
import { createHeaderSeal } from '../sealed-header.js';
import type { SetKeyring } from '../set-signer.js';
import { streamDecider, type StreamCommand } from '../stream-decider.js';
import { createMemoryCheckpoints, type DeliveryCheckpoints } from './delivery-checkpoints.js';
import { LogCheckpoints, loadDeliverySnapshot, type DeliverySnapshot } from './log-checkpoints.js';
import type { RetentionHorizon } from './retention.js';
import { Transmitter, type TransmitterOptions } from './transmitter.js';
import { pollAnswerBudgetBytes } from './stream-worker.js';

/**
 * The transmitter's delivery against a real HTTP receiver on loopback: pausing a stream whose
 * deliveries keep failing, holding what a pause holds and dropping what disabling drops, resuming
 * after a fall behind retention, and dropping a SET refused as malformed. Its waits (the retries'
 * backoff, the pause time) run on a manual scheduler: a test moves the time, it never waits it out.
 */
const issuer = 'https://tessera.example.test';
/** The test receivers listen on loopback over plain http: the policy opens both, as TESSERA_EGRESS_ALLOW=127.0.0.1 would. */
const loopbackAllowed = { policy: egressPolicy({ TESSERA_EGRESS_ALLOW: ['127.0.0.1'] }), allowHttp: true };
const quiet = { warn: () => undefined, info: () => undefined, error: () => undefined };
let key: SigningKey;
beforeAll(async () => {
  const { kid, privateJwk } = await generateSigningKey();
  key = signingKeyFromJwk(kid, privateJwk);
});

interface Receiver {
  readonly url: string;
  /** Each accepted push's claims and the stream whose Authorization header it carried, in arrival order. */
  readonly received: { jti: string; txn: string; events: Record<string, unknown>; stream: string | undefined }[];
  /** The Authorization header of each push. */
  readonly authorizations: (string | undefined)[];
  /** The kid of each SET accepted. */
  readonly kids: string[];
  answer: (claims: { txn: string }) => { status: number; body?: string };
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: Receiver['received'] = [];
  const authorizations: Receiver['authorizations'] = [];
  const kids: string[] = [];
  const receiver: Receiver = { url: '', received, authorizations, kids, answer: () => ({ status: 202 }), close: async () => undefined };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const [header, payload] = Buffer.concat(chunks).toString().split('.') as [string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Omit<Receiver['received'][number], 'stream'>;
      const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string };
      authorizations.push(request.headers.authorization);
      const { status, body } = receiver.answer(claims);
      if (status === 202) {
        // Each test stream's header is `Bearer for <stream id>`.
        received.push({ ...claims, stream: /^Bearer for (.+)$/.exec(request.headers.authorization ?? '')?.[1] });
        kids.push(kid);
      }
      response.writeHead(status, { 'content-type': 'application/json' }).end(body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(options: { pauseAfterMs?: number; ackDeadlineMs?: number; emptyPollIntervalMs?: number; retention?: RetentionHorizon; checkpoints?: DeliveryCheckpoints; keyring?: SetKeyring } = {}) {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  /** Each wait the transmitter slept on its scheduler (the retries' backoff), in order. */
  const sleeps: number[] = [];
  const recording: Scheduler = {
    after: (ms, run) => scheduler.after(ms, run),
    every: (ms, run) => scheduler.every(ms, run),
    sleep: (ms, signal) => {
      sleeps.push(ms);
      return scheduler.sleep(ms, signal);
    },
  };
  const store = new InMemoryEventStore();
  const receiver = await startReceiver();
  const checkpoints = options.checkpoints ?? createMemoryCheckpoints();
  const counts = { paused: 0, failed: 0, delivered: 0, dropped: 0 };
  const transmitterOptions: TransmitterOptions = {
    store,
    keyring: options.keyring ?? { current: () => key, currentPublishedAt: () => Math.floor(clock.now() / 1000) - 86_400 },
    seal: createHeaderSeal(singleKeyHashers(createSecretHasher(Buffer.alloc(32, 7)))),
    issuer: () => issuer,
    checkpoints,
    retention: options.retention ?? { oldestRetained: async () => 1n },
    clock,
    scheduler: recording,
    logger: quiet,
    pushTimeoutMs: 2_000,
    egress: loopbackAllowed,
    pauseAfterMs: options.pauseAfterMs ?? 60_000,
    ...(options.ackDeadlineMs === undefined ? {} : { ackDeadlineMs: options.ackDeadlineMs }),
    ...(options.emptyPollIntervalMs === undefined ? {} : { emptyPollIntervalMs: options.emptyPollIntervalMs }),
    now: () => Math.floor(Date.now() / 1000),
    backoff: { initialMs: 20, maxMs: 50 },
    counters: { delivered: () => counts.delivered++, failed: () => counts.failed++, paused: () => counts.paused++, dropped: () => counts.dropped++, forget: () => undefined },
  };
  const transmitter = new Transmitter(transmitterOptions);
  cleanups.push(() => receiver.close(), () => transmitter.stop());
  const command = (streamId: string, make: () => StreamCommand) =>
    handleCommand(store, { stream: ssfStreams.stream(streamId), decider: streamDecider, command: make, metadata: {}, onConflict: { retries: 3 } });
  const seal = createHeaderSeal(singleKeyHashers(createSecretHasher(Buffer.alloc(32, 7))));
  const configuration = (streamId: string): SsfStreamConfiguration => ({
    delivery: { method: 'push', endpointUrl: receiver.url, sealedAuthorization: seal.seal(streamId, `Bearer for ${streamId}`) },
    eventsRequested: [...eventsSupported],
    eventsDelivered: [...eventsSupported],
  });
  const createStream = async (streamId: string) => {
    await command(streamId, () => ({ type: 'CreateStream', streamId, receiverId: 'r1', configuration: configuration(streamId), now: 1 }));
    await command(streamId, () => ({ type: 'AddSubject', receiverId: 'r1', subject: { kind: 'account', accountId: 'acct-1' }, now: 1 }));
  };
  const setStatus = (streamId: string, streamStatus: 'enabled' | 'paused' | 'disabled') => command(streamId, () => ({ type: 'SetStreamStatus', receiverId: 'r1', streamStatus, by: 'receiver', now: 2 }));
  let families = 0;
  const revoke = async (): Promise<string> => {
    families += 1;
    const event: TesseraEvent = { type: 'TokenRevoked', v: 1, familyId: `fam-${families}`, accountId: 'acct-1', generation: 0, revokedAt: 1, accessExpiresAt: 2 };
    await store.append(streams.family(`fam-${families}`), [{ event }], { expectedRevision: 'any' });
    const [recorded] = await store.readStream(streams.family(`fam-${families}`));
    return recorded!.eventId;
  };
  const statusEvents = async (streamId: string) => (await store.readStream(ssfStreams.stream(streamId))).map(({ event }) => event as SsfStreamEvent).filter((event) => event.type === 'SsfStreamStatusChanged');
  /** The txn of each SET a stream's receiver accepted, in arrival order. */
  const txnsOf = (streamId: string) => receiver.received.filter((claims) => claims.stream === streamId).map((claims) => claims.txn);
  return { store, receiver, transmitter, transmitterOptions, counts, checkpoints, clock, scheduler, sleeps, command, createStream, setStatus, revoke, statusEvents, txnsOf };
}

describe('the transmitter', () => {
  it('retries a failing push with backoff on its scheduler, pauses the stream once delivery has failed for the pause time, holds what comes while paused, and resumes where it stopped when enabled, with the same jti', async () => {
    // Backoff 20 ms doubling up to 50 ms: failures at 0, 20, 60, 110 and 160 ms; the first to come
    // 150 ms or more after the first failure (the fifth) pauses the stream.
    const t = await setUp({ pauseAfterMs: 150 });
    await t.createStream('s1');
    await t.transmitter.start();
    const startedAt = t.clock.now();
    const attempts: number[] = [];
    t.receiver.answer = () => {
      attempts.push(t.clock.now() - startedAt);
      return { status: 503 };
    };
    const first = await t.revoke();
    for (const [failures, wait] of [[1, 20], [2, 40], [3, 50], [4, 50]] as const) {
      // The push went out and its refusal was counted: the worker now sleeps its backoff.
      await expect.poll(() => t.counts.failed).toBe(failures);
      expect(t.sleeps.at(-1)).toBe(wait);
      expect(attempts).toHaveLength(failures);
      await t.scheduler.advance(wait);
    }
    await expect.poll(async () => (await t.statusEvents('s1')).length).toBe(1);
    expect((await t.statusEvents('s1'))[0]).toMatchObject({ status: 'paused', by: 'transmitter', reason: expect.stringContaining('delivery has been failing since') });
    expect(attempts).toEqual([0, 20, 60, 110, 160]);
    expect(t.sleeps).toEqual([20, 40, 50, 50]);
    expect(t.counts.paused).toBe(1);
    expect(t.counts.failed).toBe(5);
    t.receiver.answer = () => ({ status: 202 });
    // A witness: an enabled stream of the same subject. The transmitter hands each event to every
    // stream in one pass, so once the witness has the SET, the paused stream was handed it too.
    await t.createStream('s2');
    const second = await t.revoke();
    await expect.poll(() => t.txnsOf('s2')).toEqual([second]);
    // Held, not sent: a stream that took it would still hold it (pending) or have sent it.
    expect(t.txnsOf('s1')).toEqual([]);
    expect(t.transmitter.workerOf('r1', 's1')?.pending).toBe(0);
    await t.setStatus('s1', 'enabled');
    await expect.poll(() => t.txnsOf('s1')).toEqual([first, second]);
    // Each stream's own Authorization header, unsealed, on every push.
    expect(new Set(t.receiver.authorizations)).toEqual(new Set(['Bearer for s1', 'Bearer for s2']));
  });

  it('signs a SET when it sends it: one sent again after a key rotation carries the new key, with the same jti', async () => {
    const { kid, privateJwk } = await generateSigningKey();
    const rotated = signingKeyFromJwk(kid, privateJwk);
    let current = key;
    const t = await setUp({ keyring: { current: () => current, currentPublishedAt: () => 1 } });
    await t.createStream('s1');
    await t.transmitter.start();
    let refusedJti: string | undefined;
    t.receiver.answer = (claims) => {
      if (current === key) {
        refusedJti = (claims as { jti?: string }).jti;
        current = rotated;
        return { status: 503 };
      }
      return { status: 202 };
    };
    await t.revoke();
    // Refused once: the retry goes out after the backoff's first wait.
    await expect.poll(() => t.counts.failed).toBe(1);
    expect(t.sleeps).toEqual([20]);
    await t.scheduler.advance(20);
    await expect.poll(() => t.receiver.received.length).toBe(1);
    expect(t.receiver.kids).toEqual([rotated.kid]);
    expect(t.receiver.received[0]!.jti).toBe(refusedJti);
  });

  it('holds what happens while paused and drops what happens while disabled', async () => {
    const t = await setUp();
    await t.createStream('s1');
    await t.transmitter.start();
    await t.setStatus('s1', 'paused');
    const whilePaused = await t.revoke();
    await t.setStatus('s1', 'disabled');
    await t.revoke();
    await t.setStatus('s1', 'enabled');
    const afterwards = await t.revoke();
    // A stream delivers in log order: once a SET made after all of these has arrived, nothing of
    // them is still to come, so the list is the whole of what the stream will ever send of them.
    const sentinel = await t.revoke();
    await expect.poll(() => t.txnsOf('s1')).toContain(sentinel);
    expect(t.txnsOf('s1')).toEqual([whilePaused, afterwards, sentinel]);
  });

  it('drops a SET the receiver refuses as invalid_request and delivers the next; retries one refused for its key', async () => {
    const t = await setUp();
    await t.createStream('s1');
    await t.transmitter.start();
    const malformed = await t.revoke();
    let keyRefusals = 0;
    t.receiver.answer = (claims) => {
      if (claims.txn === malformed) return { status: 400, body: '{"err":"invalid_request","description":"no"}' };
      if (keyRefusals < 2) {
        keyRefusals += 1;
        return { status: 400, body: '{"err":"invalid_key"}' };
      }
      return { status: 202 };
    };
    const next = await t.revoke();
    // The malformed one is dropped at once; the next, refused for its key twice, is tried again after each backoff.
    await expect.poll(() => t.counts.failed).toBe(1);
    expect(t.counts.dropped).toBe(1);
    await t.scheduler.advance(20);
    await expect.poll(() => t.counts.failed).toBe(2);
    await t.scheduler.advance(40);
    await expect.poll(() => t.receiver.received.length).toBe(1);
    expect(t.receiver.received.map((claims) => claims.txn)).toEqual([next]);
    expect(keyRefusals).toBe(2);
    expect(t.sleeps).toEqual([20, 40]);
    expect(t.transmitter.workerOf('r1', 's1')!.drops).toEqual({ count: 1, last: { jti: expect.any(String), err: 'invalid_request', at: expect.any(Number) } });
  });

  it('retries, then pauses, a stream whose receiver answers invalid_request within 15 minutes of a signing-key rotation: a stale key cache, not a malformed SET', async () => {
    let publishedAt = 0;
    const t = await setUp({ pauseAfterMs: 150, keyring: { current: () => key, currentPublishedAt: () => publishedAt } });
    publishedAt = Math.floor(t.clock.now() / 1000) - 60;
    await t.createStream('s1');
    await t.transmitter.start();
    t.receiver.answer = () => ({ status: 400, body: '{"err":"invalid_request","description":"signature"}' });
    const refused = await t.revoke();
    for (const [failures, wait] of [[1, 20], [2, 40], [3, 50], [4, 50]] as const) {
      await expect.poll(() => t.counts.failed).toBe(failures);
      await t.scheduler.advance(wait);
    }
    await expect.poll(async () => (await t.statusEvents('s1')).length).toBe(1);
    expect((await t.statusEvents('s1'))[0]).toMatchObject({ status: 'paused', by: 'transmitter' });
    expect(t.counts.dropped).toBe(0);
    expect(t.transmitter.workerOf('r1', 's1')!.drops).toEqual({ count: 0 });
    // The receiver fetched the new key: enabled again, the same SET goes out, nothing lost.
    t.receiver.answer = () => ({ status: 202 });
    await t.setStatus('s1', 'enabled');
    await expect.poll(() => t.txnsOf('s1')).toEqual([refused]);
  });

  it('a polled stream keeps a SET reported with a key error, or with invalid_request just after a key rotation, and answers it again; it drops one reported invalid_request otherwise', async () => {
    let publishedAt = 0;
    const t = await setUp({ keyring: { current: () => key, currentPublishedAt: () => publishedAt } });
    publishedAt = Math.floor(t.clock.now() / 1000) - 60;
    await t.command('p1', () => ({ type: 'CreateStream', streamId: 'p1', receiverId: 'r1', configuration: { delivery: { method: 'poll' }, eventsRequested: [...eventsSupported], eventsDelivered: [...eventsSupported] }, now: 1 }));
    await t.command('p1', () => ({ type: 'AddSubject', receiverId: 'r1', subject: { kind: 'account', accountId: 'acct-1' }, now: 1 }));
    await t.transmitter.start();
    await t.revoke();
    const worker = () => t.transmitter.workerOf('r1', 'p1')!;
    await expect.poll(() => t.transmitter.workerOf('r1', 'p1')?.pending).toBe(1);
    const poll = (setErrs: Record<string, { err: string }>) => worker().poll({ maxEvents: 10, ack: [], setErrs, waitMs: 0 }, new AbortController().signal);
    const [jti] = Object.keys((await poll({})).sets) as [string];
    expect(Object.keys((await poll({ [jti]: { err: 'invalid_key' } })).sets)).toEqual([jti]);
    expect(Object.keys((await poll({ [jti]: { err: 'invalid_request' } })).sets)).toEqual([jti]);
    expect(t.counts).toMatchObject({ failed: 2, dropped: 0 });
    publishedAt -= 15 * 60;
    expect((await poll({ [jti]: { err: 'invalid_request' } })).sets).toEqual({});
    expect(t.counts.dropped).toBe(1);
    expect(worker().drops).toMatchObject({ count: 1, last: { jti, err: 'invalid_request' } });
  });

  it('re-addresses a pending SET when the stream\'s endpoint changes: it goes out with the new endpoint as its aud', async () => {
    const t = await setUp();
    await t.createStream('s1');
    await t.transmitter.start();
    t.receiver.answer = () => ({ status: 503 });
    const pending = await t.revoke();
    await expect.poll(() => t.counts.failed).toBe(1);
    const moved = `${t.receiver.url}/moved`;
    await t.command('s1', () => ({
      type: 'UpdateStream',
      receiverId: 'r1',
      configuration: { delivery: { method: 'push', endpointUrl: moved, sealedAuthorization: createHeaderSeal(singleKeyHashers(createSecretHasher(Buffer.alloc(32, 7)))).seal('s1', 'Bearer for s1') }, eventsRequested: [...eventsSupported], eventsDelivered: [...eventsSupported] },
      now: 2,
    }));
    t.receiver.answer = () => ({ status: 202 });
    await t.scheduler.advance(20);
    await expect.poll(() => t.txnsOf('s1')).toEqual([pending]);
    expect((t.receiver.received[0] as unknown as { aud: string }).aud).toBe(moved);
  });

  it('signs a polled SET once: polled again unacknowledged, it is the same bytes; signed again only after a key rotation', async () => {
    const { kid, privateJwk } = await generateSigningKey();
    const rotated = signingKeyFromJwk(kid, privateJwk);
    let current = key;
    const t = await setUp({ keyring: { current: () => current, currentPublishedAt: () => 1 } });
    await t.command('p1', () => ({ type: 'CreateStream', streamId: 'p1', receiverId: 'r1', configuration: { delivery: { method: 'poll' }, eventsRequested: [...eventsSupported], eventsDelivered: [...eventsSupported] }, now: 1 }));
    await t.command('p1', () => ({ type: 'AddSubject', receiverId: 'r1', subject: { kind: 'account', accountId: 'acct-1' }, now: 1 }));
    await t.transmitter.start();
    for (let index = 0; index < 3; index += 1) await t.revoke();
    await expect.poll(() => t.transmitter.workerOf('r1', 'p1')?.pending).toBe(3);
    const poll = async () => (await t.transmitter.workerOf('r1', 'p1')!.poll({ maxEvents: 10, ack: [], setErrs: {}, waitMs: 0 }, new AbortController().signal)).sets;
    const first = await poll();
    expect(Object.keys(first)).toHaveLength(3);
    // ES256 signatures are randomized: the same bytes again mean the SET was not signed again.
    expect(await poll()).toEqual(first);
    current = rotated;
    const afterRotation = await poll();
    expect(Object.keys(afterRotation)).toEqual(Object.keys(first));
    for (const jwt of Object.values(afterRotation)) expect(JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString())).toMatchObject({ kid: rotated.kid });
  });

  it(`answers a poll with at most ${pollAnswerBudgetBytes} bytes of SETs, saying more are available, however many the receiver asks for`, async () => {
    const t = await setUp();
    await t.command('p1', () => ({ type: 'CreateStream', streamId: 'p1', receiverId: 'r1', configuration: { delivery: { method: 'poll' }, eventsRequested: [...eventsSupported], eventsDelivered: [...eventsSupported] }, now: 1 }));
    await t.command('p1', () => ({ type: 'AddSubject', receiverId: 'r1', subject: { kind: 'account', accountId: 'acct-1' }, now: 1 }));
    await t.transmitter.start();
    for (let index = 0; index < 300; index += 1) await t.revoke();
    await expect.poll(() => t.transmitter.workerOf('r1', 'p1')?.pending).toBe(300);
    const poll = (ack: string[]) => t.transmitter.workerOf('r1', 'p1')!.poll({ maxEvents: 1000, ack, setErrs: {}, waitMs: 0 }, new AbortController().signal);
    const seen = new Set<string>();
    for (let answer = await poll([]), rounds = 0; ; answer = await poll(Object.keys(answer.sets)), rounds += 1) {
      const bytes = Object.entries(answer.sets).reduce((sum, [jti, set]) => sum + jti.length + set.length, 0);
      const largest = Math.max(...Object.entries(answer.sets).map(([jti, set]) => jti.length + set.length));
      expect(bytes).toBeLessThan(pollAnswerBudgetBytes + largest);
      for (const jti of Object.keys(answer.sets)) seen.add(jti);
      if (!answer.moreAvailable) break;
      expect(Object.keys(answer.sets).length).toBeLessThan(300);
      expect(rounds).toBeLessThan(300);
    }
    expect(seen.size).toBe(300);
  });

  it('holds a polled SET answered and not acknowledged back from the next polls until its acknowledgment deadline, then answers it again; a long poll waits for the deadline', async () => {
    const t = await setUp({ ackDeadlineMs: 10_000 });
    await t.command('p1', () => ({ type: 'CreateStream', streamId: 'p1', receiverId: 'r1', configuration: { delivery: { method: 'poll' }, eventsRequested: [...eventsSupported], eventsDelivered: [...eventsSupported] }, now: 1 }));
    await t.command('p1', () => ({ type: 'AddSubject', receiverId: 'r1', subject: { kind: 'account', accountId: 'acct-1' }, now: 1 }));
    await t.transmitter.start();
    for (let index = 0; index < 3; index += 1) await t.revoke();
    await expect.poll(() => t.transmitter.workerOf('r1', 'p1')?.pending).toBe(3);
    const poll = (maxEvents: number, waitMs = 0, ack: string[] = []) => t.transmitter.workerOf('r1', 'p1')!.poll({ maxEvents, ack, setErrs: {}, waitMs }, new AbortController().signal);
    const first = await poll(2);
    expect(Object.keys(first.sets)).toHaveLength(2);
    expect(first.moreAvailable).toBe(true);
    const second = await poll(10);
    expect(Object.keys(second.sets)).toHaveLength(1);
    expect(Object.keys(second.sets)).not.toContain(Object.keys(first.sets)[0]);
    expect(second.moreAvailable).toBe(false);
    expect(await poll(10)).toEqual({ sets: {}, moreAvailable: false });
    await t.scheduler.advance(4_000);
    // Acknowledging the first two leaves the third, answered 4 s ago: the long poll waits for its deadline.
    let answered = false;
    const waiting = poll(10, 30_000, Object.keys(first.sets)).then((answer) => {
      answered = true;
      return answer;
    });
    await t.scheduler.advance(5_999);
    expect(answered).toBe(false);
    await t.scheduler.advance(1);
    expect(await waiting).toEqual(second);
    expect(t.transmitter.workerOf('r1', 'p1')?.pending).toBe(1);
  });

  it('refuses a poll that returns at once with nothing to answer within the empty-poll interval after the last, saying how long to wait; never one with a SET to answer or an acknowledgment, nor a long poll', async () => {
    const t = await setUp({ ackDeadlineMs: 10_000, emptyPollIntervalMs: 2_000 });
    await t.command('p1', () => ({ type: 'CreateStream', streamId: 'p1', receiverId: 'r1', configuration: { delivery: { method: 'poll' }, eventsRequested: [...eventsSupported], eventsDelivered: [...eventsSupported] }, now: 1 }));
    await t.command('p1', () => ({ type: 'AddSubject', receiverId: 'r1', subject: { kind: 'account', accountId: 'acct-1' }, now: 1 }));
    await t.transmitter.start();
    await t.revoke();
    await expect.poll(() => t.transmitter.workerOf('r1', 'p1')?.pending).toBe(1);
    const poll = (request: { waitMs?: number; ack?: string[] } = {}) =>
      t.transmitter.workerOf('r1', 'p1')!.poll({ maxEvents: 10, ack: request.ack ?? [], setErrs: {}, waitMs: request.waitMs ?? 0 }, new AbortController().signal);
    const first = Object.keys((await poll()).sets);
    expect(first).toHaveLength(1);
    // The SET is held back by its acknowledgment deadline: the next poll answers nothing, and is not refused (none answered nothing before).
    expect(await poll()).toEqual({ sets: {}, moreAvailable: false });
    await expect(poll()).rejects.toMatchObject({ code: 'ERR_SSF_EMPTY_POLL_TOO_SOON', retryAfterSeconds: 2 });
    await t.scheduler.advance(1_500);
    await expect(poll()).rejects.toMatchObject({ code: 'ERR_SSF_EMPTY_POLL_TOO_SOON', retryAfterSeconds: 1 });
    // A SET to answer is answered however soon after an empty answer.
    await t.revoke();
    await expect.poll(() => t.transmitter.workerOf('r1', 'p1')?.pending).toBe(2);
    expect(Object.values((await poll()).sets)).toHaveLength(1);
    expect(Object.keys((await poll({ ack: first })).sets)).toEqual([]);
    expect(t.transmitter.workerOf('r1', 'p1')?.pending).toBe(1);
    // A long poll is not refused: it waits (here for the held SET's deadline, 10 s after it was answered).
    let answered = false;
    const waiting = poll({ waitMs: 30_000 }).then((answer) => {
      answered = true;
      return answer;
    });
    await t.scheduler.advance(1);
    expect(answered).toBe(false);
    await t.scheduler.advance(10_000);
    expect(Object.keys((await waiting).sets)).toHaveLength(1);
    // The interval counts from the last empty answer of a poll that returned at once, not from a refusal.
    expect(await poll()).toEqual({ sets: {}, moreAvailable: false });
    await t.scheduler.advance(1_999);
    await expect(poll()).rejects.toMatchObject({ code: 'ERR_SSF_EMPTY_POLL_TOO_SOON', retryAfterSeconds: 1 });
    await t.scheduler.advance(1);
    expect(await poll()).toEqual({ sets: {}, moreAvailable: false });
  });

  it('pauses a stream that fell behind the oldest retained event, with the gap in its reason, and resumes from there when enabled', async () => {
    let oldest = 1n;
    const t = await setUp({ retention: { oldestRetained: async () => oldest } });
    await t.createStream('s1');
    await t.setStatus('s1', 'paused');
    await t.revoke();
    const lost = await t.revoke();
    const head = await t.store.headPosition();
    // Retention removed everything up to the head: the two revocations are gone before delivery.
    oldest = head! + 1n;
    await t.transmitter.start();
    await t.setStatus('s1', 'enabled');
    await expect.poll(async () => (await t.statusEvents('s1')).some((event) => event.type === 'SsfStreamStatusChanged' && event.by === 'transmitter')).toBe(true);
    const pause = (await t.statusEvents('s1')).find((event) => event.type === 'SsfStreamStatusChanged' && event.by === 'transmitter')!;
    expect(pause).toMatchObject({ status: 'paused', reason: expect.stringContaining('gap'), skippedTo: String(head) });
    expect(t.checkpoints.get('s1')).toBe(head);
    await t.setStatus('s1', 'enabled');
    const kept = await t.revoke();
    await expect.poll(() => t.receiver.received.length).toBe(1);
    expect(t.receiver.received.map((claims) => claims.txn)).toEqual([kept]);
    expect(t.receiver.received.map((claims) => claims.txn)).not.toContain(lost);
  });

  it('delivers what a stream missed while the transmitter was stopped, from its checkpoint, each SET once', async () => {
    const checkpoints = createMemoryCheckpoints();
    const t = await setUp({ checkpoints });
    await t.createStream('s1');
    await t.transmitter.start();
    const delivered = await t.revoke();
    await expect.poll(() => t.receiver.received.length).toBe(1);
    await t.transmitter.stop();
    const missed = [await t.revoke(), await t.revoke()];
    const restarted = new Transmitter({
      store: t.store,
      keyring: { current: () => key, currentPublishedAt: () => 1 },
      seal: createHeaderSeal(singleKeyHashers(createSecretHasher(Buffer.alloc(32, 7)))),
      issuer: () => issuer,
      checkpoints,
      retention: { oldestRetained: async () => 1n },
      clock: systemClock,
      logger: quiet,
      pushTimeoutMs: 2_000,
      egress: loopbackAllowed,
      pauseAfterMs: 60_000,
      now: () => 1,
    });
    cleanups.push(() => restarted.stop());
    await restarted.start();
    const live = await t.revoke();
    await expect.poll(() => t.receiver.received.length).toBe(4);
    expect(t.receiver.received.map((claims) => claims.txn)).toEqual([delivered, ...missed, live]);
  });

  it('a new holder resumes from the checkpoint the last one recorded in the log: a small whole, naming only the streams behind it', async () => {
    const t = await setUp();
    /** A holder's transmitter over checkpoints recorded in the log, from `start`. */
    const holder = (start: DeliverySnapshot) => {
      const checkpoints: LogCheckpoints = new LogCheckpoints(start, {
        // The lease's append without the lease: this test is about what is recorded, not who may record it.
        append: async (record) => void (await t.store.append(ssfStreams.delivery(), [{ event: { ...record, v: 1, replica: 'r', epoch: 1 } }], { expectedRevision: 'any' })),
        snapshot: () => transmitter.deliverySnapshot(),
        scheduler: t.scheduler,
        monotonic: t.clock,
        now: () => 1,
        refreshEveryMs: 600_000,
        onError: (error) => {
          throw error;
        },
      });
      const transmitter: Transmitter = new Transmitter({ ...t.transmitterOptions, checkpoints });
      cleanups.push(() => transmitter.stop());
      return transmitter;
    };
    const first = holder({ upTo: undefined, positions: new Map() });
    await t.createStream('s1');
    await t.createStream('held');
    await t.setStatus('held', 'paused');
    await first.start();
    const delivered = await t.revoke();
    await expect.poll(() => t.txnsOf('s1')).toEqual([delivered]);
    await first.stop();
    const records = (await t.store.readStream(ssfStreams.delivery())).map(({ event }) => event);
    const last = records.at(-1)!;
    // s1 has delivered everything: it is at upTo and not named; the paused stream holds its SET, so it is named, behind upTo.
    expect(last).toMatchObject({ type: 'SsfDeliveryCheckpointed', upTo: expect.stringMatching(/^\d+$/) });
    expect(Object.keys((last as { positions: Record<string, string> }).positions)).toEqual(['held']);

    const missed = await t.revoke();
    const next = holder(await loadDeliverySnapshot(t.store, join(tmpdir(), 'no-such-folder', 'ssf-checkpoints.json')));
    await next.start();
    await expect.poll(() => t.txnsOf('s1')).toEqual([delivered, missed]);
    await t.setStatus('held', 'enabled');
    await expect.poll(() => t.txnsOf('held')).toEqual([delivered, missed]);
  });
});
