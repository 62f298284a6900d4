import { createHash, createPublicKey, verify } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateArchiveKey, type ArchiveKey } from './archive-key.js';
import { appendEntry, liveSegments, manifestFormat, readManifest, removeLeftovers, segmentEntryBody, segmentFileName, type SegmentEntry, type StoredEntry } from './manifest.js';

/** The manifest in a real folder: entries appended, signed and chained, read back, and what a crash left swept. */
let folder: string;
let archiveDir: string;
let key: ArchiveKey;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'tessera-manifest-'));
  archiveDir = join(folder, 'archive');
  key = loadOrCreateArchiveKey(join(folder, 'keys'), archiveDir);
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** A segment body as the archiver makes it, for segment `sequence` (the file itself is not needed here). */
const segmentBody = (sequence: number): SegmentEntry['segment'] =>
  segmentEntryBody(segmentFileName(sequence), { sha256: 'a'.repeat(64), bytes: 100, rows: 2, minPosition: 10n, maxPosition: 20n, minTime: t0, maxTime: t0 + 60_000, maxTokenLifeSeconds: 3600 });
const appendSegment = (sequence: number, last: StoredEntry | undefined) => appendEntry(archiveDir, key, t0 + sequence, { kind: 'segment', segment: segmentBody(sequence) }, last);
const names = (sub: string) => readdirSync(join(archiveDir, sub)).sort();

describe('appending and reading entries', () => {
  it('numbers entries from 1 and chains each to the SHA-256 of the one before, the first to none', () => {
    const first = appendSegment(1, undefined);
    const second = appendSegment(2, first);
    expect(first.entry).toMatchObject({ format: manifestFormat, sequence: 1, previous_entry_sha256: null, created_at: new Date(t0 + 1).toISOString(), key_fingerprint: key.fingerprint, kind: 'segment' });
    expect(second.entry).toMatchObject({ sequence: 2, previous_entry_sha256: sha256(first.bytes) });
    expect(names('manifest')).toEqual(['00000001.json', '00000001.sig', '00000002.json', '00000002.sig']);
  });

  it('writes exactly the signed bytes, and beside them a raw Ed25519 signature by the key the entry names', () => {
    const stored = appendSegment(1, undefined);
    const onDisk = readFileSync(join(archiveDir, 'manifest', '00000001.json'));
    expect(onDisk.equals(stored.bytes)).toBe(true);
    const signature = readFileSync(join(archiveDir, 'manifest', '00000001.sig'));
    expect(verify(null, onDisk, createPublicKey(key.publicKeyPem), signature)).toBe(true);
    // The public half is in the archive under its fingerprint, where an auditor finds it.
    expect(readFileSync(join(archiveDir, 'keys', `${key.fingerprint}.pem`), 'utf8')).toBe(key.publicKeyPem);
  });

  it('chains to the entry it is handed (the last one verified), not to what the folder holds by then', () => {
    const first = appendSegment(1, undefined);
    appendSegment(2, first);
    const again = appendSegment(2, first);
    expect(again.entry).toMatchObject({ sequence: 2, previous_entry_sha256: sha256(first.bytes) });
  });

  it('reads the entries back in sequence order, with their bytes and signatures, skipping any other name', () => {
    let last: StoredEntry | undefined;
    for (let sequence = 1; sequence <= 3; sequence += 1) last = appendSegment(sequence, last);
    writeFileSync(join(archiveDir, 'manifest', 'notes.txt'), 'an operator\'s file');
    rmSync(join(archiveDir, 'manifest', '00000003.sig'));
    const read = readManifest(archiveDir);
    expect(read.map(({ entry }) => entry.sequence)).toEqual([1, 2, 3]);
    expect(read[2]!.bytes.equals(last!.bytes)).toBe(true);
    expect(read[0]!.signature).toBeInstanceOf(Buffer);
    expect(read[2]!.signature).toBeUndefined();
  });

  it('reads no entry where there is no manifest/ folder', () => {
    expect(readManifest(join(folder, 'nowhere'))).toEqual([]);
  });

  it('records a segment\'s facts as the entry\'s text: positions as decimal strings, times as ISO 8601', () => {
    expect(segmentBody(7)).toEqual({
      file: 'segments/00000007.parquet',
      sha256: 'a'.repeat(64),
      bytes: 100,
      rows: 2,
      min_position: '10',
      max_position: '20',
      min_time: new Date(t0).toISOString(),
      max_time: new Date(t0 + 60_000).toISOString(),
      max_token_life_seconds: 3600,
    });
  });
});

describe('live segments', () => {
  it('are the segments the manifest lists that no later deletion entry names', () => {
    const first = appendSegment(1, undefined);
    const second = appendSegment(2, first);
    const deletion = appendEntry(archiveDir, key, t0 + 3, { kind: 'deletion', reason: 'past retention', deleted: [{ sequence: 1, file: segmentFileName(1), sha256: 'a'.repeat(64) }] }, second);
    const third = appendSegment(4, deletion);
    expect(liveSegments([first, second, deletion, third]).map((entry) => entry.sequence)).toEqual([2, 4]);
    expect(liveSegments([])).toEqual([]);
  });
});

describe('what a crash leaves behind', () => {
  let entries: StoredEntry[];
  const touch = (path: string) => {
    mkdirSync(join(archiveDir, path, '..'), { recursive: true });
    writeFileSync(join(archiveDir, path), 'x');
  };

  beforeEach(() => {
    const first = appendSegment(1, undefined);
    const second = appendSegment(2, first);
    const deletion = appendEntry(archiveDir, key, t0 + 3, { kind: 'deletion', reason: 'past retention', deleted: [{ sequence: 1, file: segmentFileName(1), sha256: 'a'.repeat(64) }] }, second);
    entries = [first, second, deletion];
    touch('segments/00000002.parquet');
  });

  it('is removed: temporary files of either naming, a segment numbered past the last entry, a deleted segment\'s .deleted, a lone signature of the next entry', () => {
    const leftovers = [
      'segments/00000004.parquet.tessera-tmp',
      'segments/00000004.parquet.tmp',
      'manifest/00000004.json.tessera-tmp',
      'manifest/00000004.sig.tmp',
      'segments/00000004.parquet',
      'segments/00000001.parquet.deleted',
      'manifest/00000004.sig',
    ];
    for (const path of leftovers) touch(path);
    const swept = removeLeftovers(archiveDir, entries);
    expect(swept.removed.sort()).toEqual([...leftovers].sort());
    expect(swept.foreign).toEqual([]);
    for (const path of leftovers) expect(existsSync(join(archiveDir, path))).toBe(false);
  });

  it('is all it removes: listed segments and entries stay, and any other file is left where it is and reported', () => {
    const others = [
      // An operator's renamed segment, a copy, an unlisted segment no later than the last entry.
      'segments/00000002.parquet.away',
      'segments/copy of 00000002.parquet',
      'segments/00000003.parquet',
      // A .deleted no deletion entry names, and a signature that is not the next entry's.
      'segments/00000002.parquet.deleted',
      'manifest/00000009.sig',
      'manifest/README',
    ];
    for (const path of others) touch(path);
    const swept = removeLeftovers(archiveDir, entries);
    expect(swept.removed).toEqual([]);
    expect(swept.foreign.sort()).toEqual([...others].sort());
    for (const path of [...others, 'segments/00000002.parquet', 'manifest/00000001.json', 'manifest/00000003.sig']) expect(existsSync(join(archiveDir, path))).toBe(true);
  });

  it('is nothing in an archive with no folders yet', () => {
    expect(removeLeftovers(join(folder, 'empty'), [])).toEqual({ removed: [], foreign: [] });
  });
});
