import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '@tessera/config';
import { createHashingKey } from '@tessera/tokens';
import { ownerOnlyDataFolder } from './data-folder.js';
import { openEventStore } from '@tessera/event-store-factory';

// Octal text, so a failure reads '755', not 493.
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-data-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('the data folder at rest', () => {
  it('a folder an older release left 0755 is 0700, with the log and keys 0600, once the store and key folder are opened', async () => {
    const dataDir = join(root, 'data');
    const config = loadConfig({ TESSERA_DATA_DIR: dataDir });
    const store = await openEventStore(config);
    await store.close();
    chmodSync(dataDir, 0o755);
    ownerOnlyDataFolder(dataDir);
    const reopened = await openEventStore(config);
    try {
      createHashingKey(dataDir);
      await reopened.append('account-acct_1', [{ event: { type: 'AccountRegistered', v: 1, accountId: 'acct_1', name: 'Shop', permissions: [], at: 1 } }], {
        expectedRevision: 'no_stream',
      });
      expect(mode(dataDir)).toBe('700');
      expect(mode(join(dataDir, 'keys'))).toBe('700');
      for (const name of ['events.db', 'events.db-wal', 'keys/secret-hashing.key']) expect([name, mode(join(dataDir, name))]).toEqual([name, '600']);
    } finally {
      await reopened.close();
    }
  });

  it('leaves a data folder that does not exist alone', () => {
    ownerOnlyDataFolder(join(root, 'absent'));
    expect(() => statSync(join(root, 'absent'))).toThrow(/ENOENT/);
  });
});
