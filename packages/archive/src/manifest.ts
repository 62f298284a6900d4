import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { signBytes, type ArchiveKey } from './archive-key.js';
import { fsyncFile, temporarySuffix, type SegmentFacts } from './segment-file.js';

/**
 * The archive's manifest: one entry per file, `manifest/<sequence>.json`, exactly the bytes that
 * are signed, and beside it `<sequence>.sig`, the raw Ed25519 signature of those bytes by the
 * archive key the entry names. Each entry holds the SHA-256 of the entry before it, so the entries
 * form a chain: changing, removing or reordering one breaks every later link. An auditor checks
 * it with `sha256sum` and `openssl pkeyutl -verify` alone (docs/audit.md).
 */
export const manifestFormat = 'tessera-archive-manifest/1';

interface EntryHead {
  readonly format: typeof manifestFormat;
  readonly sequence: number;
  /** SHA-256 (hex) of the previous entry's file; null for the first. */
  readonly previous_entry_sha256: string | null;
  readonly created_at: string;
  /** The archive key that signed this entry (`keys/<fingerprint>.pem` in the archive). */
  readonly key_fingerprint: string;
}

export interface SegmentEntry extends EntryHead {
  readonly kind: 'segment';
  readonly segment: {
    /** Relative to the archive folder. */
    readonly file: string;
    readonly sha256: string;
    readonly bytes: number;
    readonly rows: number;
    readonly min_position: string;
    readonly max_position: string;
    readonly min_time: string;
    readonly max_time: string;
    readonly max_token_life_seconds: number;
  };
}

/** Segments deleted once past TESSERA_AUDIT_RETENTION: the deletion is itself on the record. */
export interface DeletionEntry extends EntryHead {
  readonly kind: 'deletion';
  readonly reason: string;
  readonly deleted: readonly { readonly sequence: number; readonly file: string; readonly sha256: string }[];
}

export type ManifestEntry = SegmentEntry | DeletionEntry;

/** An entry as read from disk: its parsed form, its exact bytes and its signature. */
export interface StoredEntry {
  readonly entry: ManifestEntry;
  readonly bytes: Buffer;
  readonly signature: Buffer | undefined;
  readonly file: string;
}

export const manifestDir = (archiveDir: string): string => join(archiveDir, 'manifest');
export const segmentsDir = (archiveDir: string): string => join(archiveDir, 'segments');
const entryName = (sequence: number) => String(sequence).padStart(8, '0');
export const segmentFileName = (sequence: number): string => `segments/${entryName(sequence)}.parquet`;

/** The entries in sequence order, as they are on disk (unchecked: verifyArchive checks them). */
export function readManifest(archiveDir: string): StoredEntry[] {
  const folder = manifestDir(archiveDir);
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((name) => /^\d{8}\.json$/.test(name))
    .sort()
    .map((name) => {
      const file = join(folder, name);
      const bytes = readFileSync(file);
      const signatureFile = file.replace(/\.json$/, '.sig');
      // Parsed as the manifest's own format; verifyArchive checks every field it relies on.
      const entry = JSON.parse(bytes.toString('utf8')) as ManifestEntry;
      return { entry, bytes, signature: existsSync(signatureFile) ? readFileSync(signatureFile) : undefined, file };
    });
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** The segments the manifest lists and no later entry deleted: what queries read. */
export function liveSegments(entries: readonly StoredEntry[]): SegmentEntry[] {
  const deleted = new Set<number>();
  for (const { entry } of entries) if (entry.kind === 'deletion') for (const gone of entry.deleted) deleted.add(gone.sequence);
  return entries.map(({ entry }) => entry).filter((entry): entry is SegmentEntry => entry.kind === 'segment' && !deleted.has(entry.sequence));
}

/**
 * Appends an entry after `last`, the newest entry as verified (undefined for the first), signed:
 * the signature first, then the entry (each written to a temporary file, fsynced, renamed, and the
 * folder fsynced), so an entry on disk always has its signature. It chains to what was verified,
 * not to what the folder holds by then.
 */
export function appendEntry(
  archiveDir: string,
  key: ArchiveKey,
  createdAt: number,
  body: { kind: 'segment'; segment: SegmentEntry['segment'] } | { kind: 'deletion'; reason: string; deleted: DeletionEntry['deleted'] },
  last: StoredEntry | undefined,
): StoredEntry {
  const folder = manifestDir(archiveDir);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const sequence = (last?.entry.sequence ?? 0) + 1;
  const head: EntryHead = {
    format: manifestFormat,
    sequence,
    previous_entry_sha256: last === undefined ? null : sha256(last.bytes),
    created_at: new Date(createdAt).toISOString(),
    key_fingerprint: key.fingerprint,
  };
  // Cast: the head and one of the two bodies make exactly one kind of entry.
  const entry = { ...head, ...body } as ManifestEntry;
  const bytes = Buffer.from(`${JSON.stringify(entry, null, 1)}\n`);
  const signature = signBytes(key, bytes);
  const file = join(folder, `${entryName(sequence)}.json`);
  writeDurably(file.replace(/\.json$/, '.sig'), signature);
  writeDurably(file, bytes);
  return { entry, bytes, signature, file };
}

export function segmentEntryBody(file: string, facts: SegmentFacts): SegmentEntry['segment'] {
  return {
    file,
    sha256: facts.sha256,
    bytes: facts.bytes,
    rows: facts.rows,
    min_position: facts.minPosition.toString(),
    max_position: facts.maxPosition.toString(),
    min_time: new Date(facts.minTime).toISOString(),
    max_time: new Date(facts.maxTime).toISOString(),
    max_token_life_seconds: facts.maxTokenLifeSeconds,
  };
}

/**
 * Files a crash left behind, and only those: Tessera's temporary files (`<name>.tessera-tmp`, or
 * `.tmp` as releases before named them), a segment written by a run that stopped before its entry
 * (numbered past the last entry), the `.deleted` file of a segment a deletion entry names, and a
 * signature written just before an entry that never followed it. Removed before a run, from
 * entries already verified; the hot rows a segment would have replaced are still in the hot store.
 * Any other file (an operator's `00000001.parquet.away`, a copy, a file of another program) is
 * left where it is and reported, never deleted.
 */
export function removeLeftovers(archiveDir: string, entries: readonly StoredEntry[]): { readonly removed: string[]; readonly foreign: string[] } {
  const removed: string[] = [];
  const foreign: string[] = [];
  const listed = new Set(entries.flatMap(({ entry }) => (entry.kind === 'segment' ? [entry.segment.file] : [])));
  const deleted = new Set(entries.flatMap(({ entry }) => (entry.kind === 'deletion' ? entry.deleted.map((gone) => gone.sequence) : [])));
  const last = entries[entries.length - 1]?.entry.sequence ?? 0;
  const sweep = (folder: string, isLeftover: (name: string) => boolean) => {
    const path = join(archiveDir, folder);
    if (!existsSync(path)) return;
    for (const name of readdirSync(path)) {
      if (isLeftover(name)) {
        rmSync(join(path, name), { force: true });
        removed.push(`${folder}/${name}`);
      } else if (!isOwn(folder, name)) {
        foreign.push(`${folder}/${name}`);
      }
    }
  };
  const isOwn = (folder: string, name: string) =>
    folder === 'segments' ? listed.has(`segments/${name}`) : /^\d{8}\.(json|sig)$/.test(name) && existsSync(join(archiveDir, folder, name.replace(/\.sig$/, '.json')));
  sweep('segments', (name) => {
    if (temporaryName.test(name)) return true;
    const segment = /^(\d{8})\.parquet$/.exec(name);
    if (segment !== null) return !listed.has(`segments/${name}`) && Number(segment[1]) > last;
    const gone = /^(\d{8})\.parquet\.deleted$/.exec(name);
    return gone !== null && deleted.has(Number(gone[1]));
  });
  sweep('manifest', (name) => {
    if (temporaryName.test(name)) return true;
    const signature = /^(\d{8})\.sig$/.exec(name);
    return signature !== null && Number(signature[1]) === last + 1 && !existsSync(join(manifestDir(archiveDir), `${signature[1]}.json`));
  });
  return { removed, foreign };
}

/** The temporary names Tessera writes in the archive folder: `<sequence>.<kind>.tessera-tmp`, or `.tmp` before. */
const temporaryName = /^\d{8}\.(parquet|json|sig)\.(tessera-tmp|tmp)$/;

function writeDurably(file: string, bytes: Buffer): void {
  const temporary = `${file}${temporarySuffix}`;
  writeFileSync(temporary, bytes, { mode: 0o600 });
  fsyncFile(temporary);
  renameSync(temporary, file);
  fsyncFile(join(file, '..'));
}
