import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventStoreContract } from './event-store-contract.js';
import { SqliteEventStore } from './sqlite-event-store.js';

eventStoreContract('SQLite on disk', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-es-'));
  const store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
  return {
    store,
    teardown: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
