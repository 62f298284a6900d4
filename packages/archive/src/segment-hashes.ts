import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { SegmentEntry } from './manifest.js';
import { sha256File } from './segment-file.js';
import { errorCode } from '@tessera/contracts/errors';

/**
 * Segments this process has hashed, by what the file system says of each file: device, inode,
 * size, and modification and change times in nanoseconds. A segment is hashed before the process
 * first uses it, and again whenever any of these moved: a write, a rename over it or a `touch`
 * changes the change time, which no one but the kernel sets. So a query checks each segment it is
 * about to read with a stat, and reads every byte of one only when it is new or was touched.
 */
export class SegmentHashes {
  private readonly checked = new Map<string, string>();

  /** Hashed already, and untouched since: a stat, no read. */
  known(archiveDir: string, entry: SegmentEntry): boolean {
    const file = join(archiveDir, entry.segment.file);
    return this.checked.get(file) === identityOf(file, entry);
  }

  /** Undefined when the segment is present with the SHA-256 its entry recorded; else what is wrong, as a sentence. */
  problemWith(archiveDir: string, entry: SegmentEntry): string | undefined {
    const file = join(archiveDir, entry.segment.file);
    const identity = identityOf(file, entry);
    if (identity === undefined) return `segment ${entry.segment.file} is missing, and no entry records its deletion`;
    if (this.checked.get(file) === identity) return undefined;
    const actual = sha256File(file);
    if (actual !== entry.segment.sha256) {
      this.checked.delete(file);
      return `segment ${entry.segment.file} hashes to ${actual}, not the ${entry.segment.sha256} its entry recorded: it was changed`;
    }
    this.checked.set(file, identity);
    return undefined;
  }
}

/** What the file system says of the file, with the hash it must have; undefined when it is missing. */
function identityOf(file: string, entry: SegmentEntry): string | undefined {
  try {
    const stat = statSync(file, { bigint: true });
    return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}:${entry.segment.sha256}`;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}
