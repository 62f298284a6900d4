import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AllStreamResolvedEvent } from '@eventstore/db-client';
import type { TesseraEvent } from '@tessera/events';
import { EventStoreUnavailable, InvalidEvent } from '@tessera/event-store';
import { InvalidArgument } from '@tessera/events';
import { EsdbEventStore, type EsdbClient } from './esdb-event-store.js';
import { allRecord, fakeSubscription, readLog, streamingRead, type PageRequest } from './testing/esdb-fakes.js';

// The real client pointed at a loopback port where nothing listens: this checks what the
// adapter reports when the server is down, without pretending to be a server.

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const registered: TesseraEvent = { type: 'AccountRegistered', v: 1, accountId: 'a-1', name: 'n', permissions: [], at: 1 };

describe('EsdbEventStore without a reachable server', () => {
  let store: EsdbEventStore;
  beforeAll(async () => {
    store = new EsdbEventStore({ connectionString: `esdb://127.0.0.1:${await closedPort()}?tls=false` });
  });
  afterAll(async () => {
    await store.close();
  });

  it('reports every operation as EventStoreUnavailable', async () => {
    await expect(store.append('account-a-1', [{ event: registered }], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(EventStoreUnavailable);
    await expect(store.readStream('account-a-1')).rejects.toBeInstanceOf(EventStoreUnavailable);
    await expect(store.readAll({ after: 10n })).rejects.toBeInstanceOf(EventStoreUnavailable);
    await expect(store.headPosition()).rejects.toBeInstanceOf(EventStoreUnavailable);
  });

  it('fails a subscription through onError and its caughtUp promise', async () => {
    const errors: unknown[] = [];
    const subscription = store.subscribeToAll({ types: ['TokenRevoked'], onEvent: () => undefined, onError: (error) => errors.push(error) });
    await expect(subscription.caughtUp).rejects.toBeInstanceOf(EventStoreUnavailable);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(EventStoreUnavailable);
    await subscription.close();
  });

  it('refuses bad input before trying the network', async () => {
    const bogus = { ...registered, at: -1 } as TesseraEvent;
    await expect(store.append('account-a-1', [{ event: bogus }], { expectedRevision: 'any' })).rejects.toBeInstanceOf(InvalidEvent);
    await expect(store.append('account-a-1', [], { expectedRevision: 'any' })).rejects.toBeInstanceOf(InvalidArgument);
    await expect(store.append('account-a-1', [{ event: registered, eventId: 'not-a-uuid' }], { expectedRevision: 'any' })).rejects.toThrow(/UUID/);
  });

  it('refuses work once closed', async () => {
    const closing = new EsdbEventStore({ connectionString: `esdb://127.0.0.1:${await closedPort()}?tls=false` });
    await closing.close();
    await expect(closing.readStream('account-a-1')).rejects.toBeInstanceOf(EventStoreUnavailable);
    expect(() => closing.subscribeToAll({ onEvent: () => undefined })).toThrow(EventStoreUnavailable);
  });
});

/** A client double over an in-memory $all: counts every read and what it asked for. */
function clientDouble(log: AllStreamResolvedEvent[]) {
  const reads: PageRequest[] = [];
  const client = {
    readAll: (request: PageRequest) => {
      reads.push(request);
      return streamingRead(readLog(log, request));
    },
    readStream: (_stream: string, request: { fromRevision: bigint; maxCount: number }) =>
      streamingRead(log.filter((r) => r.event!.revision === request.fromRevision).slice(0, request.maxCount)),
    appendToStream: async () => ({ success: true, nextExpectedRevision: 1n, position: undefined as { commit: bigint; prepare: bigint } | undefined }),
    subscribeToAll: () => fakeSubscription(),
    dispose: async () => undefined,
  };
  // Only the members the adapter calls, with the shapes it reads.
  const store = new EsdbEventStore({ connectionString: 'esdb://unused', maxReadCount: 64, scanLimit: 500 }, client as unknown as EsdbClient);
  return { client, reads, store };
}

describe('EsdbEventStore reads of $all', () => {
  const systemRun = (from: number, count: number) => Array.from({ length: count }, (_, i) => allRecord(BigInt(from + i), { system: true }));

  it('readAll asks every read for a bounded count and skips system events', async () => {
    const log = [allRecord(1n), ...systemRun(2, 100), allRecord(200n), allRecord(201n)];
    const { reads, store } = clientDouble(log);
    const events = await store.readAll({ maxCount: 2 });
    expect(events.map((e) => e.position)).toEqual([1n, 200n]);
    expect(reads.length).toBeGreaterThan(1);
    expect(reads.every((r) => r.maxCount <= 64)).toBe(true);
  });

  it('headPosition finds the newest event of ours behind system events, then reads only what came after it', async () => {
    const log = [allRecord(1n), allRecord(2n), ...systemRun(3, 40)];
    const { reads, store } = clientDouble(log);
    expect(await store.headPosition()).toBe(2n);
    const first = reads.length;
    log.push(...systemRun(100, 3));
    expect(await store.headPosition()).toBe(2n);
    // One read of at most 16 records: the three new ones and the known head stop it.
    expect(reads.slice(first)).toHaveLength(1);
    expect(reads[first]!.maxCount).toBeLessThanOrEqual(16);
    log.push(allRecord(200n));
    expect(await store.headPosition()).toBe(200n);
  });

  it('headPosition of a log with nothing of ours reads only new records the second time', async () => {
    const log = systemRun(1, 100);
    const { reads, store } = clientDouble(log);
    expect(await store.headPosition()).toBeUndefined();
    const first = reads.length;
    log.push(...systemRun(200, 2));
    expect(await store.headPosition()).toBeUndefined();
    expect(reads.slice(first)).toHaveLength(1);
  });

  it('headPosition shares one read among concurrent callers', async () => {
    const { reads, store } = clientDouble([allRecord(1n)]);
    const answers = await Promise.all([store.headPosition(), store.headPosition(), store.headPosition()]);
    expect(answers).toEqual([1n, 1n, 1n]);
    expect(reads).toHaveLength(1);
  });

  it('headPosition learns from appends: a scrape after one reads nothing older', async () => {
    const log = [allRecord(1n), ...systemRun(2, 300)];
    const { client, reads, store } = clientDouble(log);
    log.push(allRecord(400n));
    client.appendToStream = async () => ({ success: true, nextExpectedRevision: 0n, position: { commit: 400n, prepare: 400n } });
    await store.append('account-a-1', [{ event: registered }], { expectedRevision: 'no_stream' });
    expect(await store.headPosition()).toBe(400n);
    expect(reads).toHaveLength(1);
  });

  it('positionBefore answers the newest event of ours recorded before the time', async () => {
    const log = [allRecord(1n, { createdMs: 1000 }), allRecord(2n, { createdMs: 2000 }), ...systemRun(3, 20), allRecord(30n, { createdMs: 3000 })];
    const { store } = clientDouble(log);
    expect(await store.positionBefore(2500)).toBe(2n);
    expect(await store.positionBefore(2000)).toBe(1n);
    expect(await store.positionBefore(1000)).toBeUndefined();
    expect(await store.positionBefore(9000)).toBe(30n);
  });

  it('positionBefore answers "from the start" rather than walk past its scan limit', async () => {
    const log = [allRecord(1n, { createdMs: 1000 }), ...Array.from({ length: 600 }, (_, i) => allRecord(BigInt(10 + i), { createdMs: 5000 }))];
    const { reads, store } = clientDouble(log);
    expect(await store.positionBefore(2000)).toBeUndefined();
    const scanned = reads.reduce((sum, r) => sum + r.maxCount, 0);
    expect(scanned).toBeLessThan(600);
  });

  it('answers an idempotent retry that came without a position with the original last event, not the stream head', async () => {
    const stream = 'account-a-1';
    const log = [allRecord(10n, { stream, revision: 0n }), allRecord(20n, { stream, revision: 1n }), allRecord(30n, { stream, revision: 2n })];
    const { store } = clientDouble(log);
    // The double answers nextExpectedRevision 1 without a position, as servers before 22.x do on a retry.
    expect(await store.append(stream, [{ event: registered }], { expectedRevision: 0n })).toEqual({ nextExpectedRevision: 1n, position: 20n });
  });
});
