import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { archivePublicKeys, verifyBytes } from './archive-key.js';
import type { ArchiveHead, ArchivePins } from './archive-pins.js';
import { liveSegments, manifestDir, manifestFormat, readManifest, sha256, type SegmentEntry, type StoredEntry } from './manifest.js';
import { SegmentHashes } from './segment-hashes.js';

/** The first thing found wrong, named so that an operator can go and look. */
export interface ArchiveBreak {
  /** The manifest entry where it was found (the entry, or the one listing the segment). */
  readonly sequence: number;
  /** The file at fault, relative to the archive folder. */
  readonly file: string;
  readonly problem: string;
}

export interface ArchiveVerification {
  readonly ok: boolean;
  readonly entries: number;
  /** Segments checked (listed and not deleted). */
  readonly segments: number;
  readonly rows: number;
  /** SHA-256 of the last entry: record it, and a later verification that ends elsewhere shows entries were cut off. */
  readonly headSha256: string | null;
  /** The last entry's sequence and hash. */
  readonly head: ArchiveHead | undefined;
  /** Fingerprints of the keys that signed entries. */
  readonly keys: readonly string[];
  readonly firstBreak: ArchiveBreak | undefined;
  /** Where the pins it was checked against came from; undefined when it was checked against itself only. */
  readonly pinnedBy: string | undefined;
  /** Every entry, checked (empty when broken): what the archiver may act on. */
  readonly stored: readonly StoredEntry[];
  /** The live segments of those entries (empty when broken): what queries may read. */
  readonly live: readonly SegmentEntry[];
}

export interface VerifyOptions {
  /** Hash every live segment (default), or check the manifest alone. */
  readonly segmentHashes?: boolean;
  /** Segments already hashed by this process, and not touched since, are not read again. */
  readonly hashes?: SegmentHashes;
  /**
   * The keys whose signatures count and the head the manifest must reach. Without pins, a key the
   * archive holds under its own fingerprint is trusted, and a cut tail goes unseen: say so.
   */
  readonly pins?: ArchivePins;
}

/**
 * Checks the whole archive, in order: every manifest entry's signature by the key it names (a
 * pinned key, held by the archive under its own fingerprint), the chain (each entry's hash of the
 * one before, and sequences without a gap), the pinned head (still there, unchanged: the chain may
 * only have grown past it), and every segment not deleted by a later entry: present, with the
 * SHA-256 its entry recorded. Stops at the first break and names it.
 */
export function verifyArchive(archiveDir: string, options: VerifyOptions = {}): ArchiveVerification {
  const { pins } = options;
  const hashes = options.segmentHashes === false ? undefined : (options.hashes ?? new SegmentHashes());
  const keys = new Map(archivePublicKeys(archiveDir).map((key) => [key.fingerprint, key]));
  const pinnedBy = pins?.source;
  if (pins?.head !== undefined && !existsSync(manifestDir(archiveDir))) {
    return result([], 0, 0, [], pinnedBy, { sequence: pins.head.sequence, file: 'manifest', problem: `the manifest/ folder is missing, though ${pins.source} pins its head at entry ${pins.head.sequence} (sha256 ${pins.head.sha256})` });
  }
  let entries: StoredEntry[];
  try {
    entries = readManifest(archiveDir);
  } catch (error) {
    return result([], 0, 0, [], pinnedBy, { sequence: 0, file: 'manifest', problem: `the manifest cannot be read: ${error instanceof Error ? error.message : String(error)}` });
  }
  const usedKeys = new Set<string>();
  let previous: StoredEntry | undefined;
  const deletedLater = new Set<number>();
  for (const { entry } of entries) if (entry.kind === 'deletion' && Array.isArray(entry.deleted)) for (const gone of entry.deleted) deletedLater.add(gone.sequence);
  let segments = 0;
  let rows = 0;
  for (const stored of entries) {
    const { entry } = stored;
    const name = relative(archiveDir, stored.file);
    const expectedSequence = (previous?.entry.sequence ?? 0) + 1;
    const stop = (problem: string, file = name): ArchiveVerification => result(entries, segments, rows, [...usedKeys], pinnedBy, { sequence: entry.sequence ?? expectedSequence, file, problem });
    if (entry.format !== manifestFormat) return stop(`not a manifest entry of ${manifestFormat}`);
    if (entry.sequence !== expectedSequence) return stop(`entry ${expectedSequence} is missing: the next one found is ${entry.sequence}`);
    if (pins !== undefined && !pins.keys.has(entry.key_fingerprint)) return stop(`signed by archive key ${entry.key_fingerprint}, which ${pins.source} does not pin: the entry was signed by a key Tessera did not make`);
    const key = keys.get(entry.key_fingerprint);
    if (key === undefined) return stop(`signed by archive key ${entry.key_fingerprint}, which the archive does not hold (keys/${entry.key_fingerprint}.pem)`);
    if (!key.matchesName) return stop(`archive key file keys/${entry.key_fingerprint}.pem does not hold the key of that fingerprint`, `keys/${entry.key_fingerprint}.pem`);
    if (stored.signature === undefined) return stop('its signature file is missing', name.replace(/\.json$/, '.sig'));
    if (!verifyBytes(key.pem, stored.bytes, stored.signature)) return stop(`its signature does not verify with archive key ${entry.key_fingerprint}: the entry or its signature was changed`);
    const previousHash = previous === undefined ? null : sha256(previous.bytes);
    if (entry.previous_entry_sha256 !== previousHash) return stop(`it does not chain to the entry before it (previous_entry_sha256 ${String(entry.previous_entry_sha256)}, that entry hashes to ${String(previousHash)})`);
    if (pins?.head?.sequence === entry.sequence && sha256(stored.bytes) !== pins.head.sha256) {
      return stop(`it hashes to ${sha256(stored.bytes)}, not the ${pins.head.sha256} ${pins.source} pins for entry ${entry.sequence}: the manifest was replaced or rolled back`);
    }
    usedKeys.add(entry.key_fingerprint);
    if (entry.kind === 'segment' && !deletedLater.has(entry.sequence)) {
      const file = join(archiveDir, entry.segment.file);
      if (!existsSync(file)) return stop(`segment ${entry.segment.file} is missing, and no entry records its deletion`, entry.segment.file);
      const problem = hashes?.problemWith(archiveDir, entry);
      if (problem !== undefined) return stop(problem, entry.segment.file);
      segments += 1;
      rows += entry.segment.rows;
    }
    previous = stored;
  }
  const last = entries[entries.length - 1]?.entry.sequence ?? 0;
  if (pins?.head !== undefined && last < pins.head.sequence) {
    const problem = `the manifest ends at entry ${last}, before the head ${pins.source} pins (entry ${pins.head.sequence}, sha256 ${pins.head.sha256}): entries were cut off`;
    return result(entries, segments, rows, [...usedKeys], pinnedBy, { sequence: pins.head.sequence, file: 'manifest', problem });
  }
  return result(entries, segments, rows, [...usedKeys], pinnedBy, undefined);
}

function result(entries: readonly StoredEntry[], segments: number, rows: number, keys: string[], pinnedBy: string | undefined, firstBreak: ArchiveBreak | undefined): ArchiveVerification {
  const last = entries[entries.length - 1];
  const headSha256 = last === undefined ? null : sha256(last.bytes);
  const ok = firstBreak === undefined;
  return {
    ok,
    entries: entries.length,
    segments,
    rows,
    headSha256,
    head: last === undefined || headSha256 === null ? undefined : { sequence: last.entry.sequence, sha256: headSha256 },
    keys,
    firstBreak,
    pinnedBy,
    stored: ok ? entries : [],
    live: ok ? liveSegments(entries) : [],
  };
}

const relative = (archiveDir: string, file: string) => file.slice(archiveDir.length).replace(/^[/\\]/, '');
