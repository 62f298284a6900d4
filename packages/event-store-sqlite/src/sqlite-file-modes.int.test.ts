import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRegistered } from '@tessera/contracts';
import { SqliteEventStore } from './sqlite-event-store.js';

// Octal text, so a failure reads '644', not 420.
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
const registered: AccountRegistered = { type: 'AccountRegistered', v: 1, accountId: 'acct_1', name: 'Shop', permissions: [], at: 1_800_000_000 };
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-modes-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('SQLite files at rest', () => {
  it('makes its folder 0700 and the log, its WAL and shared memory 0600', async () => {
    const folder = join(root, 'data');
    const store = new SqliteEventStore({ file: join(folder, 'events.db') });
    try {
      await store.append('account-acct_1', [{ event: registered }], { expectedRevision: 'no_stream' });
      expect(mode(folder)).toBe('700');
      for (const name of ['events.db', 'events.db-wal', 'events.db-shm']) expect([name, mode(join(folder, name))]).toEqual([name, '600']);
    } finally {
      await store.close();
    }
  });

  it('tightens a log and WAL that an older release left readable by others', async () => {
    const file = join(root, 'events.db');
    await new SqliteEventStore({ file }).close();
    chmodSync(file, 0o644);
    writeFileSync(`${file}-wal`, '', { mode: 0o644 });
    chmodSync(`${file}-wal`, 0o644);
    const store = new SqliteEventStore({ file });
    try {
      await store.append('account-acct_1', [{ event: registered }], { expectedRevision: 'no_stream' });
      for (const name of ['events.db', 'events.db-wal', 'events.db-shm']) expect([name, mode(join(root, name))]).toEqual([name, '600']);
    } finally {
      await store.close();
    }
  });
});
