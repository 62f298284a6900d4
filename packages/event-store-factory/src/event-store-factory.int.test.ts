import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TesseraEvent } from '@tessera/events';
import { EventStoreUnavailable } from '@tessera/event-store';
import { NoEventStore, openEventStore } from './event-store-factory.js';

/**
 * Opens each kind of store through the factory every service and CLI command uses: this is
 * the wiring that once passed a string where the EventStoreDB adapter wanted an object.
 */
const registered = (accountId: string): TesseraEvent => ({ type: 'AccountRegistered', v: 1, accountId, name: 'factory', permissions: [], at: 1_700_000_000 });

/** A port that was free a moment ago and has nothing listening on it now. */
async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 1));
    });
  });
}

describe('openEventStore', () => {
  it('opens SQLite in the data folder by default, and it takes an append', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tessera-factory-'));
    const store = await openEventStore({ TESSERA_DATA_DIR: dataDir, TESSERA_EVENT_STORE: undefined });
    try {
      await store.append('account-f', [{ event: registered('f') }], { expectedRevision: 'no_stream' });
      expect((await store.readStream('account-f')).map((recorded) => recorded.event)).toEqual([registered('f')]);
      await store.probe();
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('with mustExist, refuses a folder that has no store, naming the file, and creates nothing there', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tessera-factory-'));
    try {
      const refused = await openEventStore({ TESSERA_DATA_DIR: dataDir, TESSERA_EVENT_STORE: undefined }, { mustExist: true }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(NoEventStore);
      expect(refused).toMatchObject({ file: join(dataDir, 'events.db') });
      expect(readdirSync(dataDir)).toEqual([]);
      const made = await openEventStore({ TESSERA_DATA_DIR: dataDir, TESSERA_EVENT_STORE: undefined });
      await made.close();
      const existing = await openEventStore({ TESSERA_DATA_DIR: dataDir, TESSERA_EVENT_STORE: undefined }, { mustExist: true });
      await existing.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('opens sqlite:<file> where TESSERA_EVENT_STORE says', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-factory-'));
    const store = await openEventStore({ TESSERA_DATA_DIR: '/nonexistent-unused', TESSERA_EVENT_STORE: `sqlite:${join(dir, 'elsewhere.db')}` });
    try {
      await store.append('account-g', [{ event: registered('g') }], { expectedRevision: 'no_stream' });
      expect(await store.headPosition()).toBeGreaterThan(0n);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens esdb:// with nothing listening, and every call fails with the typed EventStoreUnavailable, not a TypeError', async () => {
    const port = await closedPort();
    const store = await openEventStore({ TESSERA_DATA_DIR: '/nonexistent-unused', TESSERA_EVENT_STORE: `esdb://127.0.0.1:${port}?tls=false` });
    try {
      await expect(store.probe()).rejects.toBeInstanceOf(EventStoreUnavailable);
      await expect(store.append('account-h', [{ event: registered('h') }], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(EventStoreUnavailable);
      await expect(store.readStream('account-h')).rejects.toBeInstanceOf(EventStoreUnavailable);
      await expect(store.headPosition()).rejects.toBeInstanceOf(EventStoreUnavailable);
      const subscriptionError = await new Promise<unknown>((resolve) => {
        store.subscribeToAll({ onEvent: () => undefined, onError: resolve });
      });
      expect(subscriptionError).toBeInstanceOf(EventStoreUnavailable);
    } finally {
      await store.close();
    }
  });
});
