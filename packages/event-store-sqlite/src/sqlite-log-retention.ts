import { existsSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { LogRemoval, LogRetention } from '@tessera/event-store';
import { CodedError } from '@tessera/contracts';

/** Rows deleted per transaction: each holds the write lock for a millisecond or two, so appends wait no longer. */
const rowsPerTransaction = 500;
/** Free pages given back per incremental vacuum step (2 MB), between which appends may take the lock. */
const pagesPerVacuumStep = 512;
/**
 * Between two steps, milliseconds the lock is left free. An append that found it taken sleeps in
 * SQLite's busy handler (1, 2, 5, 10 ms…) and must find it free when it wakes: yielding only to the
 * event loop would take the lock back before, and the append would sleep again.
 */
const pauseMs = 10;
const pause = () => new Promise((resolve) => setTimeout(resolve, pauseMs));

/**
 * Removes archived events from the SQLite log, on a connection of its own (the archiver's thread):
 * by position, in short transactions that queue behind the writer thread's group commits like any
 * other writer (busy timeout). Positions are never reused (AUTOINCREMENT), so a position removed
 * stays the archive's.
 *
 * Space: a log made by this release has auto_vacuum=INCREMENTAL, and `reclaim()` gives freed pages
 * back, so the file shrinks. A log made before cannot switch without a VACUUM, which rewrites the
 * whole file under an exclusive lock: Tessera does not do that on its own. Such a file stops
 * growing instead (SQLite reuses the freed pages); docs/operations.md says how to make it shrink.
 */
export class SqliteLogRetention implements LogRetention {
  private readonly db: Database.Database;
  private readonly removeMany: Database.Statement<[string]>;
  private readonly elsewhere: Database.Statement<[string], { position: number; stream: string }>;
  /** 2: INCREMENTAL; 0: a log made before, which reuses freed pages but never shrinks. */
  readonly autoVacuum: number;

  constructor(private readonly file: string) {
    this.db = new Database(file, { fileMustExist: true });
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.autoVacuum = Number(this.db.pragma('auto_vacuum', { simple: true }));
    // One statement per chunk, the [position, stream] pairs as a JSON array: one call into SQLite rather
    // than one per row. A row goes only if it is at that position in that stream: a position that
    // holds another stream's event (a manifest entry that lies, a log restored from an older copy)
    // removes nothing.
    this.removeMany = this.db.prepare<[string]>(
      'DELETE FROM events WHERE position IN (SELECT events.position FROM json_each(?) AS pair JOIN events ON events.position = pair.value ->> 0 AND events.stream = pair.value ->> 1)',
    );
    this.elsewhere = this.db.prepare<[string], { position: number; stream: string }>(
      'SELECT events.position, events.stream FROM json_each(?) AS pair JOIN events ON events.position = pair.value ->> 0 AND events.stream <> pair.value ->> 1 LIMIT 1',
    );
  }

  async remove(removals: readonly LogRemoval[]): Promise<void> {
    const pairs = removals.flatMap((removal) => removal.positions.map((position) => `[${position},${JSON.stringify(removal.stream)}]`));
    for (let start = 0; start < pairs.length; start += rowsPerTransaction) {
      const chunk = `[${pairs.slice(start, start + rowsPerTransaction).join(',')}]`;
      this.db
        .transaction(() => {
          const other = this.elsewhere.get(chunk);
          if (other !== undefined) throw new PositionHoldsAnotherStream(BigInt(other.position), other.stream);
          this.removeMany.run(chunk);
        })
        .immediate();
      await pause();
    }
  }

  async reclaim(): Promise<void> {
    if (this.autoVacuum !== 2) return;
    for (;;) {
      const free = Number(this.db.pragma('freelist_count', { simple: true }));
      if (free === 0) break;
      this.db.pragma(`incremental_vacuum(${pagesPerVacuumStep})`);
      await pause();
      if (free <= pagesPerVacuumStep) break;
    }
    // The vacuumed pages reach the file at a checkpoint; PASSIVE never waits for readers.
    this.db.pragma('wal_checkpoint(PASSIVE)');
  }

  bytesOnDisk(): number {
    return sizeOf(this.file) + sizeOf(`${this.file}-wal`);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** Removal stops: the log holds another stream's event at a position the archive says was its. */
export class PositionHoldsAnotherStream extends CodedError {
  readonly code = 'ERR_POSITION_HOLDS_ANOTHER_STREAM';
  constructor(position: bigint, stream: string) {
    super(`log position ${position} holds an event of ${stream}, not the archived event named for removal: nothing more is removed (a log restored from an older copy beside a newer archive?)`);
    this.name = 'PositionHoldsAnotherStream';
  }
}

const sizeOf = (file: string) => (existsSync(file) ? statSync(file).size : 0);
