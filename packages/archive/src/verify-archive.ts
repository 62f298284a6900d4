import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { archivePublicKeys, verifyBytes } from './archive-key.js';
import { manifestFormat, readManifest, sha256, type StoredEntry } from './manifest.js';
import { sha256File } from './segment-file.js';

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
  /** Fingerprints of the keys that signed entries. */
  readonly keys: readonly string[];
  readonly firstBreak: ArchiveBreak | undefined;
}

/**
 * Checks the whole archive, in order: every manifest entry's signature by the key it names (a
 * key the archive holds under its own fingerprint), the chain (each entry's hash of the one
 * before, and sequences without a gap), and every segment not deleted by a later entry: present,
 * with the SHA-256 its entry recorded. Stops at the first break and names it.
 * `segmentHashes: false` checks the manifest alone (cheap: run after every archiving run).
 */
export function verifyArchive(archiveDir: string, options: { readonly segmentHashes?: boolean } = {}): ArchiveVerification {
  const keys = new Map(archivePublicKeys(archiveDir).map((key) => [key.fingerprint, key]));
  let entries: StoredEntry[];
  try {
    entries = readManifest(archiveDir);
  } catch (error) {
    return result([], 0, 0, [], { sequence: 0, file: 'manifest', problem: `the manifest cannot be read: ${error instanceof Error ? error.message : String(error)}` });
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
    const stop = (problem: string, file = name): ArchiveVerification => result(entries, segments, rows, [...usedKeys], { sequence: entry.sequence ?? expectedSequence, file, problem });
    if (entry.format !== manifestFormat) return stop(`not a manifest entry of ${manifestFormat}`);
    if (entry.sequence !== expectedSequence) return stop(`entry ${expectedSequence} is missing: the next one found is ${entry.sequence}`);
    const key = keys.get(entry.key_fingerprint);
    if (key === undefined) return stop(`signed by archive key ${entry.key_fingerprint}, which the archive does not hold (keys/${entry.key_fingerprint}.pem)`);
    if (!key.matchesName) return stop(`archive key file keys/${entry.key_fingerprint}.pem does not hold the key of that fingerprint`, `keys/${entry.key_fingerprint}.pem`);
    if (stored.signature === undefined) return stop('its signature file is missing', name.replace(/\.json$/, '.sig'));
    if (!verifyBytes(key.pem, stored.bytes, stored.signature)) return stop(`its signature does not verify with archive key ${entry.key_fingerprint}: the entry or its signature was changed`);
    const previousHash = previous === undefined ? null : sha256(previous.bytes);
    if (entry.previous_entry_sha256 !== previousHash) return stop(`it does not chain to the entry before it (previous_entry_sha256 ${String(entry.previous_entry_sha256)}, that entry hashes to ${String(previousHash)})`);
    usedKeys.add(entry.key_fingerprint);
    if (entry.kind === 'segment' && !deletedLater.has(entry.sequence)) {
      const file = join(archiveDir, entry.segment.file);
      if (!existsSync(file)) return stop(`segment ${entry.segment.file} is missing, and no entry records its deletion`, entry.segment.file);
      if (options.segmentHashes !== false) {
        const actual = sha256File(file);
        if (actual !== entry.segment.sha256) return stop(`segment ${entry.segment.file} hashes to ${actual}, not the ${entry.segment.sha256} its entry recorded: it was changed`, entry.segment.file);
      }
      segments += 1;
      rows += entry.segment.rows;
    }
    previous = stored;
  }
  return result(entries, segments, rows, [...usedKeys], undefined);
}

function result(entries: readonly StoredEntry[], segments: number, rows: number, keys: string[], firstBreak: ArchiveBreak | undefined): ArchiveVerification {
  const last = entries[entries.length - 1];
  return { ok: firstBreak === undefined, entries: entries.length, segments, rows, headSha256: last === undefined ? null : sha256(last.bytes), keys, firstBreak };
}

const relative = (archiveDir: string, file: string) => file.slice(archiveDir.length).replace(/^[/\\]/, '');
