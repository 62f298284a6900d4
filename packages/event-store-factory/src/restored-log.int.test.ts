import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendEntry, loadOrCreateArchiveKey, segmentEntryBody, type StoredEntry } from '@tessera/archive';
import type { TesseraEvent } from '@tessera/events';
import { openEventStore } from './event-store-factory.js';

/**
 * A log restored from an older copy, beside a data folder whose other files are newer: the relay's
 * and the transmitter's checkpoints, and the archive, name positions the older log never reached.
 * Opened through the factory every writer uses, its next event comes after all of them.
 */
const registered = (accountId: string): TesseraEvent => ({ type: 'AccountRegistered', v: 1, accountId, name: 'restored', permissions: [], at: 1_700_000_000 });
let dataDir: string;
const config = () => ({ TESSERA_DATA_DIR: dataDir, TESSERA_EVENT_STORE: undefined });

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-restored-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

async function appendAccount(accountId: string): Promise<bigint> {
  const store = await openEventStore(config());
  try {
    return (await store.append(`account-${accountId}`, [{ event: registered(accountId) }], { expectedRevision: 'no_stream' })).position;
  } finally {
    await store.close();
  }
}

/** An archive entry signed by this folder's archive key, naming positions up to `maxPosition`; pinned in the log when `pinned`. */
async function archiveThrough(maxPosition: bigint, pinned: boolean): Promise<void> {
  const archiveDir = join(dataDir, 'archive');
  const key = loadOrCreateArchiveKey(join(dataDir, 'keys'), archiveDir);
  const at = new Date(1_700_000_000_000).toISOString();
  const body = segmentEntryBody('segments/00000001.parquet', { sha256: '0'.repeat(64), bytes: 1, rows: 1, minPosition: maxPosition, maxPosition, minTime: 0, maxTime: 0, maxTokenLifeSeconds: 0 });
  const first: StoredEntry | undefined = undefined;
  appendEntry(archiveDir, key, Date.parse(at), { kind: 'segment', segment: body }, first);
  if (!pinned) return;
  const store = await openEventStore(config());
  try {
    await store.append('archivetrust', [{ event: { type: 'ArchiveKeyTrusted', v: 1, fingerprint: key.fingerprint, source: 'made', at: 1_700_000_000 } }], { expectedRevision: 'any' });
  } finally {
    await store.close();
  }
}

describe('a log restored from an older copy, opened for writing', () => {
  it('hands out positions after the relay\'s and the transmitter\'s checkpoints', async () => {
    expect(await appendAccount('a')).toBe(1n);
    writeFileSync(join(dataDir, 'relay-checkpoint.json'), JSON.stringify({ position: '40', savedAt: new Date().toISOString() }));
    writeFileSync(join(dataDir, 'ssf-checkpoints.json'), JSON.stringify({ streams: { s1: '55', s2: '12' } }));
    expect(await appendAccount('b')).toBe(56n);
  });

  it('hands out positions after the archive\'s, when the log pins the key that signed it', async () => {
    expect(await appendAccount('a')).toBe(1n);
    await archiveThrough(500n, true);
    expect(await appendAccount('b')).toBe(501n);
  });

  it('is not moved by an archive entry the log does not pin: a forged one cannot push the log\'s positions anywhere', async () => {
    expect(await appendAccount('a')).toBe(1n);
    await archiveThrough(9_000_000_000n, false);
    expect(await appendAccount('b')).toBe(2n);
  });
});
