import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TesseraEvent } from '@tessera/contracts';
import { EventStoreUnavailable } from './event-store.js';
import { EsdbEventStore } from './esdb-event-store.js';

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
    await expect(store.append('account-a-1', [{ event: bogus }], { expectedRevision: 'any' })).rejects.toBeInstanceOf(TypeError);
    await expect(store.append('account-a-1', [], { expectedRevision: 'any' })).rejects.toBeInstanceOf(TypeError);
    await expect(store.append('account-a-1', [{ event: registered, eventId: 'not-a-uuid' }], { expectedRevision: 'any' })).rejects.toThrow(/UUID/);
  });

  it('refuses work once closed', async () => {
    const closing = new EsdbEventStore({ connectionString: `esdb://127.0.0.1:${await closedPort()}?tls=false` });
    await closing.close();
    await expect(closing.readStream('account-a-1')).rejects.toBeInstanceOf(EventStoreUnavailable);
    expect(() => closing.subscribeToAll({ onEvent: () => undefined })).toThrow(EventStoreUnavailable);
  });
});
