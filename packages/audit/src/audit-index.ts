import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@tessera/events';
import type { EventStore } from '@tessera/event-store';
import { builtFromAnotherLog } from './another-log.js';
import type { EventQuery } from './event-query.js';
import { IndexAccessAt, type AccessAtAnswer, type AccessAtQuery, type ArchivedGrant } from './index-access-at.js';
import { IndexArchiveRows, type IndexRowForArchive } from './index-archive-rows.js';
import { IndexEvents, type EventPage } from './index-events.js';
import { emptyIndex, openIndexFile } from './index-file.js';
import { IndexIngest, type ApplyOutcome } from './index-ingest.js';
import { IndexMeta } from './index-meta.js';
import { PlannerStatistics } from './index-statistics.js';
import { QueryBudget } from './query-budget.js';

/**
 * The audit read model: every event of the log as one row in SQLite tables in a file of their
 * own (`audit-index.db` in the data folder, 0600), so that a query by account, family or login
 * reads an index rather than the log, on SQLite and EventStoreDB alike. It is derived data:
 * a missing, unreadable or outdated file is rebuilt from the log, and it remembers the position
 * it reflects so that a restart continues from there.
 *
 * The one object its users hold, over one connection: the file (index-file.ts), what goes in and
 * out (index-ingest.ts), the queries within their budget (index-events.ts, index-access-at.ts) and
 * the rows the archive keeps (index-archive-rows.ts) each live in a module of their own.
 */
export class AuditIndex {
  private closed = false;

  private constructor(
    private readonly db: Database.Database,
    /** Whether open() found the index unusable and started it again from an empty one. */
    readonly rebuilt: boolean,
    private readonly meta: IndexMeta,
    private readonly ingest: IndexIngest,
    private readonly eventQueries: IndexEvents,
    private readonly accessAtQueries: IndexAccessAt,
    private readonly archiveRows: IndexArchiveRows,
  ) {}

  /**
   * Opens the index in `file` (`:memory:` for a test), making it when missing; a file that is not
   * an index of this version (corrupt, another program's, older) is emptied or replaced, and the
   * index then fills again from the log.
   */
  static open(file: string): AuditIndex {
    return openIndexFile(file, (db, rebuilt) => {
      const meta = new IndexMeta(db);
      // First: the queries' statements call its function, and do not compile without it.
      const budget = new QueryBudget(db);
      return new AuditIndex(
        db,
        rebuilt,
        meta,
        new IndexIngest(db, meta, new PlannerStatistics(db, meta)),
        new IndexEvents(db, meta, budget),
        new IndexAccessAt(db, meta, budget),
        new IndexArchiveRows(db),
      );
    });
  }

  /** The position of the last event the index reflects; undefined while it reflects none. */
  position(): bigint | undefined {
    return this.meta.position();
  }

  /** Empties the index when it was built from another log than `store`'s (another-log.ts). True when it did. */
  async forgetIfAnotherLog(store: Pick<EventStore, 'readAll' | 'headPosition'>): Promise<boolean> {
    if (!(await builtFromAnotherLog(this.meta, store))) return false;
    emptyIndex(this.db);
    return true;
  }

  /** Starts filling an empty index from a whole log in one transaction (IndexIngest.startBulkLoad); false when it is not empty. */
  startBulkLoad(): boolean {
    return this.ingest.startBulkLoad();
  }

  finishBulkLoad(): void {
    this.ingest.finishBulkLoad();
  }

  abandonBulkLoad(): void {
    this.ingest.abandonBulkLoad();
  }

  /** Applies events that follow `from` in the log, in one transaction (IndexIngest.apply). */
  apply(batch: readonly RecordedEvent[], from: bigint | undefined): ApplyOutcome {
    return this.ingest.apply(batch, from);
  }

  /** Removes archived events and the grants they made (IndexIngest.forget); repeatable. */
  forget(positions: readonly bigint[], grantIds: readonly string[]): void {
    this.ingest.forget(positions, grantIds);
  }

  /** One page of the rows matching `query`, in log order; AuditQueryOverBudget past `budgetMs`. */
  events(query: EventQuery, budgetMs?: number): EventPage {
    return this.eventQueries.page(query, budgetMs);
  }

  /** Which of the account's tokens were usable at `at`, a page of grants at a time (IndexAccessAt.answer). */
  accessAt(
    accountId: string,
    at: number,
    query: AccessAtQuery = { limit: Number.MAX_SAFE_INTEGER },
    budgetMs?: number,
    archived: readonly ArchivedGrant[] = [],
  ): AccessAtAnswer | undefined {
    return this.accessAtQueries.answer(accountId, at, query, budgetMs, archived);
  }

  /** The index's rows at these positions, as the archive keeps them (none for a position the index does not hold). */
  rowsAt(positions: readonly bigint[]): Map<bigint, IndexRowForArchive> {
    return this.archiveRows.rowsAt(positions);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.abandonBulkLoad();
    // Keeps the query planner's statistics current, as SQLite recommends before closing.
    this.db.pragma('optimize');
    this.db.close();
  }
}
