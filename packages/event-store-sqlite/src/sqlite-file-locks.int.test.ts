import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRegistered } from '@tessera/contracts';
import { SqliteEventStore } from './sqlite-event-store.js';
import { inAnotherThread, locksHeldOn } from './testing/process-locks.js';

const registered: AccountRegistered = { type: 'AccountRegistered', v: 1, accountId: 'acct_1', name: 'Shop', permissions: [], at: 1_800_000_000 };
const storeModule = new URL('./sqlite-event-store.ts', import.meta.url).href;
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-locks-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

// Another program's SQLite connection checkpoints and deletes the live -wal when it closes and
// finds no lock on the file: every lock the server holds must survive whatever else it opens.
describe.runIf(process.platform === 'linux')("the log's locks, as another program sees them", () => {
  it('are still held after a second store opens the same log in another thread, as the audit and families threads do', async () => {
    const file = join(root, 'events.db');
    const store = new SqliteEventStore({ file });
    try {
      await store.append('account-acct_1', [{ event: registered }], { expectedRevision: 'no_stream' });
      await store.headPosition();
      const before = locksHeldOn(file);
      expect(before).toBeGreaterThan(0);
      const second = await inAnotherThread<string>(
        `const { SqliteEventStore } = await import(${JSON.stringify(storeModule)});
         const reader = new SqliteEventStore({ file, readOnly: true });
         post(String(await reader.headPosition()));`,
        file,
      );
      try {
        expect(second.value).toBe('1');
        expect(locksHeldOn(file)).toBeGreaterThanOrEqual(before);
        // And the first store still works on the same, undeleted WAL.
        await store.append('account-acct_2', [{ event: { ...registered, accountId: 'acct_2' } }], { expectedRevision: 'no_stream' });
        expect(await store.headPosition()).toBe(2n);
      } finally {
        await second.worker.terminate();
      }
    } finally {
      await store.close();
    }
  });

  it('are still held after a second store opens the same log in the same thread', async () => {
    const file = join(root, 'events.db');
    const store = new SqliteEventStore({ file });
    try {
      await store.headPosition();
      const before = locksHeldOn(file);
      // A second store in this very thread: its construction must not drop the first one's locks either.
      const reader = new SqliteEventStore({ file, readOnly: true });
      expect(locksHeldOn(file)).toBeGreaterThanOrEqual(before);
      await reader.close();
    } finally {
      await store.close();
    }
  });
});
