import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fingerprintOf, loadOrCreateArchiveKey, type ArchiveKey } from './archive-key.js';
import type { ArchivePins } from './archive-pins.js';
import { appendEntry, segmentEntryBody, segmentFileName, type StoredEntry } from './manifest.js';
import { verifyArchive } from './verify-archive.js';

/**
 * verifyArchive on a real archive folder, one break at a time. The segments are files of bytes with
 * the SHA-256 their entries record: verification hashes them, it does not read them as Parquet.
 */
let folder: string;
let archiveDir: string;
let key: ArchiveKey;
let entries: StoredEntry[];
const t0 = Date.parse('2026-01-01T00:00:00Z');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const entryFile = (sequence: number, suffix = 'json') => join(archiveDir, 'manifest', `${String(sequence).padStart(8, '0')}.${suffix}`);
const pinsOf = (through: StoredEntry | undefined, keys = [key.fingerprint]): ArchivePins => ({
  keys: new Set(keys),
  head: through === undefined ? undefined : { sequence: through.entry.sequence, sha256: sha256(through.bytes) },
  source: 'the event log',
});

function appendSegment(sequence: number, last: StoredEntry | undefined, signer = key): StoredEntry {
  const bytes = Buffer.from(`segment ${sequence}`);
  mkdirSync(join(archiveDir, 'segments'), { recursive: true });
  writeFileSync(join(archiveDir, segmentFileName(sequence)), bytes);
  const facts = { sha256: sha256(bytes), bytes: bytes.length, rows: 10 * sequence, minPosition: 1n, maxPosition: 2n, minTime: t0, maxTime: t0, maxTokenLifeSeconds: 3600 };
  return appendEntry(archiveDir, signer, t0, { kind: 'segment', segment: segmentEntryBody(segmentFileName(sequence), facts) }, last);
}

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'tessera-verify-'));
  archiveDir = join(folder, 'archive');
  key = loadOrCreateArchiveKey(join(folder, 'keys'), archiveDir);
  const first = appendSegment(1, undefined);
  const second = appendSegment(2, first);
  const third = appendSegment(3, second);
  entries = [first, second, third];
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const head = () => entries[entries.length - 1]!;
/** The first break against `pins` (by default the current head's), or against the archive itself with `unpinned`. */
const firstBreak = (pins: ArchivePins | 'unpinned' = pinsOf(head())) => verifyArchive(archiveDir, pins === 'unpinned' ? {} : { pins }).firstBreak;

describe('a whole archive', () => {
  it('verifies against its pins: every entry, every live segment, the head, the keys that signed', () => {
    const verification = verifyArchive(archiveDir, { pins: pinsOf(head()) });
    expect(verification).toMatchObject({ ok: true, entries: 3, segments: 3, rows: 60, headSha256: sha256(head().bytes), head: { sequence: 3 }, keys: [key.fingerprint], firstBreak: undefined, pinnedBy: 'the event log' });
    expect(verification.stored.map(({ entry }) => entry.sequence)).toEqual([1, 2, 3]);
    expect(verification.live.map((entry) => entry.sequence)).toEqual([1, 2, 3]);
  });

  it('may have grown past its pinned head: the chain only grew', () => {
    expect(verifyArchive(archiveDir, { pins: pinsOf(entries[1]) }).ok).toBe(true);
  });

  it('without pins trusts a key it holds under its own fingerprint, and says it was checked against itself only', () => {
    expect(verifyArchive(archiveDir)).toMatchObject({ ok: true, pinnedBy: undefined });
  });

  it('counts no segment a later entry deleted, present or not', () => {
    const deletion = appendEntry(archiveDir, key, t0, { kind: 'deletion', reason: 'past retention', deleted: [{ sequence: 1, file: segmentFileName(1), sha256: 'x' }] }, head());
    rmSync(join(archiveDir, segmentFileName(1)));
    expect(verifyArchive(archiveDir, { pins: pinsOf(deletion) })).toMatchObject({ ok: true, entries: 4, segments: 2, rows: 50 });
  });
});

describe('each break, named at the first one found', () => {
  it('a missing entry: a gap in the sequence', () => {
    rmSync(entryFile(2));
    rmSync(entryFile(2, 'sig'));
    expect(firstBreak()).toEqual({ sequence: 3, file: 'manifest/00000003.json', problem: 'entry 2 is missing: the next one found is 3' });
  });

  it('a bad signature: the entry changed after it was signed', () => {
    writeFileSync(entryFile(2), readFileSync(entryFile(2), 'utf8').replace('"rows": 20', '"rows": 21'));
    expect(firstBreak()).toMatchObject({ sequence: 2, file: 'manifest/00000002.json', problem: expect.stringMatching(/its signature does not verify with archive key .*: the entry or its signature was changed/) });
  });

  it('a missing signature', () => {
    rmSync(entryFile(1, 'sig'));
    expect(firstBreak()).toMatchObject({ sequence: 1, file: 'manifest/00000001.sig', problem: 'its signature file is missing' });
  });

  it('an entry signed by a key the pins do not name, though the archive holds it under its own fingerprint', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const stranger: ArchiveKey = { fingerprint: fingerprintOf(publicKey), privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
    writeFileSync(join(archiveDir, 'keys', `${stranger.fingerprint}.pem`), stranger.publicKeyPem);
    appendSegment(4, head(), stranger);
    expect(firstBreak()).toMatchObject({ sequence: 4, problem: expect.stringMatching(/signed by archive key .*, which the event log does not pin: the entry was signed by a key Tessera did not make/) });
    // Checked against itself only, the same archive passes: that is what the pins are for.
    expect(firstBreak('unpinned')).toBeUndefined();
  });

  it('an entry whose key the archive does not hold, or holds under another key\'s name', () => {
    const keyFile = join(archiveDir, 'keys', `${key.fingerprint}.pem`);
    const original = readFileSync(keyFile);
    rmSync(keyFile);
    expect(firstBreak()).toMatchObject({ sequence: 1, problem: expect.stringMatching(/which the archive does not hold/) });
    writeFileSync(keyFile, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
    expect(firstBreak()).toMatchObject({ sequence: 1, file: `keys/${key.fingerprint}.pem`, problem: expect.stringMatching(/does not hold the key of that fingerprint/) });
    writeFileSync(keyFile, original);
    expect(firstBreak()).toBeUndefined();
  });

  it('an entry re-signed by the right key but chained to another entry than the one before it', () => {
    const forged: StoredEntry = { ...entries[0]!, bytes: Buffer.from('another first entry') };
    appendSegment(2, forged);
    expect(firstBreak()).toMatchObject({ sequence: 2, problem: expect.stringMatching(/does not chain to the entry before it/) });
  });

  it('a cut tail: the manifest ends before the pinned head, though the chain left is whole', () => {
    rmSync(entryFile(3));
    rmSync(entryFile(3, 'sig'));
    expect(verifyArchive(archiveDir).ok).toBe(true);
    expect(firstBreak()).toEqual({ sequence: 3, file: 'manifest', problem: expect.stringMatching(/the manifest ends at entry 2, before the head the event log pins \(entry 3, .*\): entries were cut off/) });
  });

  it('a replaced head: the pinned entry is there, signed and chained, but not the one pinned', () => {
    rmSync(entryFile(3));
    rmSync(entryFile(3, 'sig'));
    const pinned = head();
    appendEntry(archiveDir, key, t0 + 1, { kind: 'deletion', reason: 'rolled back', deleted: [] }, entries[1]);
    expect(firstBreak(pinsOf(pinned))).toMatchObject({ sequence: 3, problem: expect.stringMatching(/not the .* the event log pins for entry 3: the manifest was replaced or rolled back/) });
  });

  it('a missing manifest/ folder, where the pins say a head exists', () => {
    renameSync(join(archiveDir, 'manifest'), join(archiveDir, 'manifest.away'));
    expect(firstBreak()).toMatchObject({ sequence: 3, file: 'manifest', problem: expect.stringMatching(/the manifest\/ folder is missing, though the event log pins its head at entry 3/) });
  });

  it('a missing segment that no entry records as deleted', () => {
    rmSync(join(archiveDir, segmentFileName(2)));
    expect(firstBreak()).toEqual({ sequence: 2, file: segmentFileName(2), problem: `segment ${segmentFileName(2)} is missing, and no entry records its deletion` });
  });

  it('a changed segment: its bytes no longer hash to what its entry recorded (unless only the manifest is checked)', () => {
    writeFileSync(join(archiveDir, segmentFileName(1)), 'segment 1, changed');
    expect(firstBreak()).toMatchObject({ sequence: 1, file: segmentFileName(1), problem: expect.stringMatching(/hashes to .*, not the .* its entry recorded: it was changed/) });
    expect(verifyArchive(archiveDir, { pins: pinsOf(head()), segmentHashes: false }).ok).toBe(true);
  });

  it('a file in manifest/ that is not an entry of this format', () => {
    writeFileSync(entryFile(2), JSON.stringify({ format: 'something/9', sequence: 2 }));
    expect(firstBreak()).toMatchObject({ sequence: 2, problem: expect.stringMatching(/not a manifest entry of tessera-archive-manifest\/1/) });
  });

  it('a broken archive hands the archiver and the queries nothing to act on', () => {
    rmSync(join(archiveDir, segmentFileName(3)));
    expect(verifyArchive(archiveDir, { pins: pinsOf(head()) })).toMatchObject({ ok: false, stored: [], live: [] });
  });
});
