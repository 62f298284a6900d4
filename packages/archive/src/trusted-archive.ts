import { statSync } from 'node:fs';
import type { ArchivePins } from './archive-pins.js';
import { manifestDir, type SegmentEntry } from './manifest.js';
import { SegmentHashes } from './segment-hashes.js';
import { verifyArchive, type ArchiveBreak, type ArchiveVerification } from './verify-archive.js';
import { errorCode, CodedError } from '@tessera/contracts/errors';

/**
 * The archive failed its verification against its pins: a query that would read it answers 503
 * naming the break, never an answer with rows missing or changed.
 */
export class ArchiveUntrusted extends CodedError {
  readonly code = 'ERR_ARCHIVE_UNTRUSTED';
  constructor(readonly found: ArchiveBreak) {
    super(`the archive failed its verification, so audit answers that reach into it are withheld: manifest entry ${found.sequence}, ${found.file}: ${found.problem}. Run tessera archive verify.`);
    this.name = 'ArchiveUntrusted';
  }
}

/**
 * The archive as queries may read it: the live segments of a manifest verified against the pins
 * (signatures by pinned keys, the chain, the pinned head), verified again whenever the manifest
 * folder changed (an entry added, removed or renamed, or the folder replaced), and each segment
 * hashed before it is first read and again once touched (SegmentHashes).
 */
export class TrustedArchive {
  private verifiedFor: string | undefined;
  private verification: ArchiveVerification | undefined;

  constructor(
    readonly archiveDir: string,
    private readonly pins: () => Promise<ArchivePins>,
    /** Shared with the process's archiver, so a segment it wrote and hashed is not read again here. */
    private readonly hashes: SegmentHashes = new SegmentHashes(),
  ) {}

  /** The live segments, verified; throws ArchiveUntrusted when the archive does not check out. */
  async segments(): Promise<readonly SegmentEntry[]> {
    const verification = await this.verified();
    if (!verification.ok) throw new ArchiveUntrusted(verification.firstBreak!);
    return verification.live;
  }

  /** Before reading these segments: each is whole (hashed now unless already hashed and untouched). */
  check(segments: readonly SegmentEntry[]): void {
    for (const entry of segments) {
      const problem = this.hashes.problemWith(this.archiveDir, entry);
      if (problem === undefined) continue;
      // Not remembered: the segment is hashed again at the next read, so one put back is read again at once.
      throw new ArchiveUntrusted({ sequence: entry.sequence, file: entry.segment.file, problem });
    }
  }

  /**
   * Hashes live segments this process has not hashed yet, for about `budgetMs`, so that queries
   * after a start seldom hash one themselves: a task the caller runs in slices between queries.
   * True while some remain; throws ArchiveUntrusted on a segment that does not check out.
   */
  async hashAhead(budgetMs: number): Promise<boolean> {
    const started = performance.now();
    const verification = await this.verified();
    if (!verification.ok) return false;
    for (const entry of verification.live) {
      if (this.hashes.known(this.archiveDir, entry)) continue;
      if (performance.now() - started >= budgetMs) return true;
      const problem = this.hashes.problemWith(this.archiveDir, entry);
      if (problem !== undefined) throw new ArchiveUntrusted({ sequence: entry.sequence, file: entry.segment.file, problem });
    }
    return false;
  }

  /** The manifest as last verified, verified again if its folder changed or `full` asks for every segment's bytes. */
  async verified(options: { readonly full?: boolean } = {}): Promise<ArchiveVerification> {
    const identity = folderIdentity(manifestDir(this.archiveDir));
    if (this.verification !== undefined && identity === this.verifiedFor && options.full !== true) return this.verification;
    const pins = await this.pins();
    this.verification = verifyArchive(this.archiveDir, { pins, hashes: this.hashes, segmentHashes: options.full === true });
    this.verifiedFor = identity;
    return this.verification;
  }

  /** What the last verification found, without verifying: for metrics and status. */
  last(): ArchiveVerification | undefined {
    return this.verification;
  }

  /** The archive was just written (an archiving run): verify it again before the next read. */
  invalidate(): void {
    this.verifiedFor = undefined;
  }
}

function folderIdentity(folder: string): string {
  try {
    const stat = statSync(folder, { bigint: true });
    return `${stat.dev}:${stat.ino}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return 'absent';
    throw error;
  }
}
