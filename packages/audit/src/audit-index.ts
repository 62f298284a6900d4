import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { ArchivedEvent } from '@tessera/archive';
import type { RecordedEvent } from '@tessera/contracts';
import type { EventStore } from '@tessera/event-store';
import { ownerOnlySqliteFile, ownerOnlySqliteSidecars } from '@tessera/event-store-sqlite';
import { accessAt, grantOf, type AccessAt, type AccessEvent } from './access-at.js';
import { indexSchema, indexTables, indexVersion, maxIndexedPosition, secondaryIndexes } from './audit-index-schema.js';
import { indexedEventOf, type AuditRow } from './audit-row.js';
import type { EventQuery } from './event-query.js';

/** A page of the audit trail and the log position the index reflected when it was read. */
export interface EventPage {
  readonly rows: readonly AuditRow[];
  /** The position of the page's last row when more rows match after it. */
  readonly more: bigint | undefined;
  readonly logPosition: bigint | undefined;
}

export interface AccessAtAnswer extends AccessAt {
  readonly logPosition: bigint | undefined;
  /** Where the next page starts, when more grants of the account may bear on the instant. */
  readonly more: AccessAtCursor | undefined;
}

/** access-at pages over the account's grants in the order they expire: the last one a page read. */
export interface AccessAtCursor {
  readonly lastExpiresAt: number;
  readonly grantId: string;
}

export interface AccessAtQuery {
  /** Grants per page (families and v1 tokens); the answer names at most as many. */
  readonly limit: number;
  readonly after?: AccessAtCursor | undefined;
}

/** A grant found in the archive for access-at: a family (by its id) or a v1 token (`@<position>`), with its access events. */
export interface ArchivedGrant {
  readonly grantId: string;
  readonly firstAt: number;
  readonly lastExpiresAt: number;
  readonly events: readonly { readonly position: bigint; readonly access: AccessEvent }[];
}

/** What the archive keeps of an index row (the position, stream and revision come from the log), with the index's own access event. */
export type IndexRowForArchive = Omit<ArchivedEvent, 'position' | 'stream' | 'revision' | 'access'> & { readonly access: AccessEvent | undefined };

type ArchiveRowTuple = [
  position: bigint,
  type: string,
  time: bigint,
  account: string | null,
  family: string | null,
  generation: bigint | null,
  reason: string | null,
  request: string | null,
  source: string | null,
  actor: string | null,
  login: string | null,
  apiId: string | null,
  access: string | null,
];

const isAfter = (grant: { lastExpiresAt: number; grantId: string }, after: AccessAtCursor) =>
  grant.lastExpiresAt > after.lastExpiresAt || (grant.lastExpiresAt === after.lastExpiresAt && grant.grantId > after.grantId);

/** A query stopped at its time budget: a 503 over HTTP, exit 4 in the CLI. */
export class AuditQueryOverBudget extends Error {
  readonly code = 'ERR_AUDIT_QUERY_OVER_BUDGET';
  constructor(readonly budgetMs: number) {
    super(`the audit query ran over its time budget of ${budgetMs} ms (TESSERA_AUDIT_QUERY_BUDGET_MS): narrow it (an account, a family, a shorter since/until, a smaller limit)`);
    this.name = 'AuditQueryOverBudget';
  }
}

/** What apply() did: the position the index now reflects; `gap` when the batch did not follow it. */
export interface ApplyOutcome {
  readonly position: bigint | undefined;
  readonly gap: boolean;
}

type RowTuple = [position: string, type: string, time: number, account: string | null, family: string | null, generation: number | null, reason: string | null, request: string | null, source: string | null, actor: string | null];

const rowColumns = 'CAST(position AS TEXT), type, time, account_id, family_id, generation, reason, request_id, source_address, actor';

interface GrantRow {
  readonly grantId: string;
  readonly accountId: string;
  firstAt: number;
  lastExpiresAt: number;
  readonly apiLoginId: string | null;
  readonly position: bigint | null;
}

interface AccessGrantsParameters {
  readonly account: string;
  readonly at: number;
  /** A span that never ends: a cut's. */
  readonly never: number;
  /** The page starts after this (last_expires_at, grant_id): the cursor, or just past `at`. */
  readonly fromExpiresAt: number;
  readonly fromGrant: string;
  readonly limit: number;
}

/**
 * Where access-at's page starts in the account's grants index: after the cursor, and only grants
 * that end after `at`, as ONE lower bound. Given two (`last_expires_at > at`, and the cursor as an
 * OR), SQLite ranged the index from the looser one and read every grant the account ever had: 250 ms
 * on an account of 600,000 families, for a page of 100. Expiries are whole seconds, so ending after
 * `at` is (last_expires_at, grant_id) > (floor(at) + 1, ''): no grant id is empty.
 */
export function accessGrantsFrom(at: number, after: AccessAtCursor | undefined): { fromExpiresAt: number; fromGrant: string } {
  const pastAt = Math.floor(at) + 1;
  return after !== undefined && after.lastExpiresAt >= pastAt ? { fromExpiresAt: after.lastExpiresAt, fromGrant: after.grantId } : { fromExpiresAt: pastAt, fromGrant: '' };
}

/**
 * access-at's page of grants: those of the account that cover the instant, in the order they
 * expire after it. Pinned to the account's grants index: the right plan whatever the statistics
 * say (a plan chosen when the index was small scanned every family event once it had grown).
 */
const accessGrantsSql = `SELECT grant_id, last_expires_at, position FROM grants INDEXED BY grants_account
  WHERE tessera_in_budget() AND account_id = @account AND (last_expires_at, grant_id) > (@fromExpiresAt, @fromGrant) AND last_expires_at < @never
    AND first_at <= @at
  ORDER BY last_expires_at, grant_id LIMIT @limit`;

function explainAccessAt(db: Database.Database): string[] {
  const parameters: AccessGrantsParameters = { account: 'a', at: 0, never: Number.MAX_SAFE_INTEGER, ...accessGrantsFrom(0, undefined), limit: 1 };
  return db
    .prepare<[AccessGrantsParameters], { detail: string }>(`EXPLAIN QUERY PLAN ${accessGrantsSql}`)
    .all(parameters)
    .map((row) => row.detail);
}

/** How many grants a bulk load gathers before it writes them (in key order): bounds its memory. */
const gatheredGrants = 200_000;

/**
 * Page cache, in KiB (SQLite counts a negative cache_size so). This connection is the only one that
 * writes the index, so its cache is never emptied by another's commit and fills with the pages
 * each event's nine B-trees touch: at 32 MB it grew by about 1 MB every 10 s of the soak and was
 * still filling after five minutes (docs/benchmarks.md). At 4 MB it is full within about a minute
 * there, and the queries read what it lacks from the OS's file cache, well within their targets
 * on a million events. A bulk load gets more while it builds the indexes, and gives it back after.
 */
const cacheKiB = { usual: 4 * 1024, bulk: 128 * 1024 };

/**
 * The audit read model: every event of the log as one row in SQLite tables in a file of their
 * own (`audit-index.db` in the data folder, 0600), so that a query by account, family or login
 * reads an index rather than the log, on SQLite and EventStoreDB alike. It is derived data:
 * a missing, unreadable or outdated file is rebuilt from the log, and it remembers the position
 * it reflects so that a restart continues from there.
 *
 * Several processes may feed one file (the server and `tessera audit`): each batch is applied
 * in one transaction that first reads the position the index reflects, so none is applied twice.
 */
export class AuditIndex {
  private readonly statements;
  private readonly queries = new Map<string, Database.Statement<unknown[], RowTuple>>();
  private closed = false;
  /** During a bulk load: the grants gathered since they were last written, by grant id. */
  private bulk: { readonly grants: Map<string, GrantRow> } | undefined;
  /** The running query's budget: performance.now() past `deadline` stops it at its next row. */
  private budget: { readonly deadline: number; readonly ms: number } | undefined;

  private constructor(
    private readonly db: Database.Database,
    /** Whether open() found the index unusable and started it again from an empty one. */
    readonly rebuilt: boolean,
  ) {
    // Every query's WHERE calls it once per row it visits: SQLite's statement stops at the first
    // row past the deadline, whatever plan it chose. better-sqlite3 offers no interrupt; this is one.
    db.function('tessera_in_budget', { deterministic: false }, () => {
      if (this.budget !== undefined && performance.now() > this.budget.deadline) throw new AuditQueryOverBudget(this.budget.ms);
      return 1;
    });
    this.statements = {
      meta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
      setMeta: db.prepare<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
      insertEvent: db.prepare<[bigint, string, number, ...(string | number | null)[]]>(
        'INSERT INTO events (position, type, time, account_id, family_id, generation, reason, request_id, source_address, actor, api_login_id, api_id, access) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      upsertGrant: db.prepare<[string, string, number, number, string | null, bigint | null]>(
        `INSERT INTO grants (grant_id, account_id, first_at, last_expires_at, api_login_id, position) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (grant_id) DO UPDATE SET first_at = MIN(first_at, excluded.first_at), last_expires_at = MAX(last_expires_at, excluded.last_expires_at)`,
      ),
      grantLogin: db.prepare<[string], { api_login_id: string | null }>('SELECT api_login_id FROM grants WHERE grant_id = ?'),
      knownAccount: db.prepare<[string], { found: number }>('SELECT 1 AS found FROM events WHERE account_id = ? LIMIT 1'),
      // Plans are pinned (INDEXED BY) where one plan is always right: they must not depend on
      // statistics gathered when the index was small.
      accountSince: db.prepare<[string], number>('SELECT time FROM events INDEXED BY events_account WHERE account_id = ? ORDER BY position LIMIT 1').pluck(),
      accessCuts: db
        .prepare<[{ account: string; at: number; never: number }], string>(
          `SELECT e.access FROM grants g INDEXED BY grants_account JOIN events e ON e.position = g.position
            WHERE tessera_in_budget() AND g.account_id = @account AND g.last_expires_at >= @never AND g.first_at <= @at
            ORDER BY e.position`,
        )
        .pluck(),
      accessGrants: db
        .prepare<[AccessGrantsParameters], [grantId: string, lastExpiresAt: bigint, position: bigint | null]>(accessGrantsSql)
        .raw(true)
        .safeIntegers(true),
      familyAccess: db
        .prepare<[string], [position: bigint, access: string]>(
          'SELECT position, access FROM events INDEXED BY events_family WHERE tessera_in_budget() AND family_id = ? AND access IS NOT NULL ORDER BY position',
        )
        .raw(true)
        .safeIntegers(true),
      singleAccess: db.prepare<[bigint], string>('SELECT access FROM events WHERE position = ?').pluck(),
      archiveRow: db
        .prepare<[bigint], ArchiveRowTuple>(
          'SELECT position, type, time, account_id, family_id, generation, reason, request_id, source_address, actor, api_login_id, api_id, access FROM events WHERE position = ?',
        )
        .raw(true)
        .safeIntegers(true),
      // The positions and grant ids as JSON arrays: one call into SQLite per chunk rather than one per row.
      forgetEvents: db.prepare<[string]>('DELETE FROM events WHERE position IN (SELECT value FROM json_each(?))'),
      forgetGrants: db.prepare<[string]>('DELETE FROM grants WHERE grant_id IN (SELECT value FROM json_each(?))'),
      analyzedAt: db.prepare<[], string>("SELECT value FROM meta WHERE key = 'analyzed_at'").pluck(),
    };
  }

  /**
   * Opens the index in `file` (`:memory:` for a test), making it when missing; a file that is not
   * an index of this version (corrupt, another program's, older) is emptied or replaced, and the
   * index then fills again from the log.
   */
  static open(file: string): AuditIndex {
    try {
      return AuditIndex.openAs(file);
    } catch (error) {
      if (file === ':memory:' || !unusableFile(error)) throw error;
      // Derived data: removed and made again. A second failure is not ours to hide.
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
      return AuditIndex.openAs(file, true);
    }
  }

  private static openAs(file: string, replaced = false): AuditIndex {
    if (file !== ':memory:') {
      // The index names accounts, families and addresses: only the service's user may read it.
      ownerOnlySqliteFile(file);
    }
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      if (file !== ':memory:') ownerOnlySqliteSidecars(file);
      // Derived data: a commit lost in a power cut is read again from the log. No fsync per batch.
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
      // The WAL is emptied by checkpoints but keeps its size; a bulk load would leave it as large as the index.
      db.pragma('journal_size_limit = 33554432');
      db.pragma(`cache_size = -${cacheKiB.usual}`);
      const version = tableExists(db, 'meta') ? db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'version'").get()?.value : undefined;
      const outdated = version !== indexVersion && (version !== undefined || tableExists(db, 'events'));
      // Written only when needed: opening an index another process is filling must not wait for it.
      if (version !== indexVersion) {
        if (outdated) db.transaction(() => { for (const table of indexTables) db.exec(`DROP TABLE IF EXISTS ${table}`); }).immediate();
        // Rows leave the index as they are archived: an index with no table yet gives their space
        // back to the file system (incremental vacuum), one made before this release first becomes so.
        if (Number(db.pragma('auto_vacuum', { simple: true })) !== 2) {
          db.pragma('auto_vacuum = INCREMENTAL');
          db.exec('VACUUM');
        }
        db.transaction(() => {
          db.exec(indexSchema);
          db.prepare("INSERT INTO meta (key, value) VALUES ('version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(indexVersion);
        }).immediate();
      }
      return new AuditIndex(db, replaced || outdated);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** The position of the last event the index reflects; undefined while it reflects none. */
  position(): bigint | undefined {
    const value = this.statements.meta.get('log_position')?.value;
    return value === undefined ? undefined : BigInt(value);
  }

  /**
   * Empties the index when it was built from another log than `store`'s: the log's first event, or
   * its event at the position the index reflects, is not the one the index saw there. A data folder
   * restored from an older backup (whose log then grew again), or TESSERA_EVENT_STORE pointed
   * elsewhere. True when it did.
   */
  async forgetIfAnotherLog(store: Pick<EventStore, 'readAll' | 'headPosition'>): Promise<boolean> {
    const position = this.position();
    if (position === undefined) return false;
    const [first] = await store.readAll({ maxCount: 1 });
    // Strictly after position − 1: the event at the position itself, if the log has one.
    const [last] = await store.readAll({ after: position - 1n, maxCount: 1 });
    const saw = (key: string) => this.statements.meta.get(key)?.value;
    // Events archived from the head of the log leave a later first event: the event the index saw
    // first is then the archive's, and the event at the index's position is what tells the logs apart.
    const firstArchived = first !== undefined && saw('first_position') !== undefined && first.position > BigInt(saw('first_position')!);
    const firstSame = firstArchived || first?.eventId === saw('first_event_id');
    const lastSame = last?.position === position && last.eventId === saw('last_event_id');
    // The event at the index's position archived too (an idle log loses its newest events to the
    // archive): the log has handed out that position, and no event now sits there. A log restored
    // from an older copy either has not reached the position, or holds another event at it.
    const lastArchived = last?.position !== position && ((await store.headPosition()) ?? 0n) >= position;
    if (firstSame && (lastSame || lastArchived)) return false;
    this.db
      .transaction(() => {
        for (const table of indexTables) this.db.exec(`DELETE FROM ${table}`);
        this.statements.setMeta.run('version', indexVersion);
      })
      .immediate();
    return true;
  }

  /**
   * Filling an empty index from a whole log, in one transaction: the secondary indexes are dropped
   * and made again by finishBulkLoad() with one sort each, and grants are gathered in memory and
   * written in key order, several times faster than keeping them all up to date row by row. One
   * transaction, so that a process stopped midway leaves the index empty as it was (the next start
   * loads again), and another process meanwhile waits or is told the index is busy. False, doing
   * nothing, when the index is not empty.
   */
  startBulkLoad(): boolean {
    if (this.bulk !== undefined || this.position() !== undefined) return false;
    this.db.exec('BEGIN IMMEDIATE');
    // Another process may have filled it between the look and the lock.
    if (this.position() !== undefined) {
      this.db.exec('ROLLBACK');
      return false;
    }
    for (const name of secondaryIndexes) this.db.exec(`DROP INDEX IF EXISTS ${name}`);
    this.db.pragma(`cache_size = -${cacheKiB.bulk}`);
    this.bulk = { grants: new Map() };
    return true;
  }

  /** Ends a bulk load: the grants and the secondary indexes written, all committed at once. */
  finishBulkLoad(): void {
    if (this.bulk === undefined) return;
    this.writeGatheredGrants();
    this.db.exec(indexSchema);
    this.db.exec('COMMIT');
    this.bulk = undefined;
    // The whole load went through the WAL: copied into the file now, and the WAL cut back.
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.pragma(`cache_size = -${cacheKiB.usual}`);
    // The planner's statistics, from a sample: most filters have several indexes to choose from.
    this.analyze(this.position());
  }

  /** Drops a bulk load that cannot finish (the process stops, the log failed): the index is empty again. */
  abandonBulkLoad(): void {
    if (this.bulk === undefined) return;
    this.bulk = undefined;
    this.db.exec('ROLLBACK');
    this.db.pragma(`cache_size = -${cacheKiB.usual}`);
  }

  /**
   * Applies events that follow `from` in the log (the position the caller read after), in one
   * transaction. Events the index already reflects are skipped, so a batch that overlaps another
   * process's is harmless. If the index reflects less than `from` (emptied by another process
   * meanwhile), nothing is applied and `gap` says to read again from `position`.
   */
  apply(batch: readonly RecordedEvent[], from: bigint | undefined): ApplyOutcome {
    const outcome = this.db
      .transaction((): ApplyOutcome => {
        const reflected = this.position();
        if ((reflected ?? -1n) < (from ?? -1n)) return { position: reflected, gap: true };
        let lastTime = Number(this.statements.meta.get('last_time')?.value ?? 0);
        let last: RecordedEvent | undefined;
        for (const recorded of batch) {
          if (reflected !== undefined && recorded.position <= reflected) continue;
          if (reflected === undefined && last === undefined) {
            this.statements.setMeta.run('first_event_id', recorded.eventId);
            this.statements.setMeta.run('first_position', recorded.position.toString());
          }
          lastTime = Math.max(lastTime, recorded.recordedAt);
          this.insert(recorded, lastTime);
          last = recorded;
        }
        if (last === undefined) return { position: reflected, gap: false };
        this.statements.setMeta.run('log_position', last.position.toString());
        this.statements.setMeta.run('last_event_id', last.eventId);
        this.statements.setMeta.run('last_time', String(lastTime));
        return { position: last.position, gap: false };
      })
      .immediate();
    this.keepStatisticsTrue(outcome.position);
    return outcome;
  }

  /**
   * The planner's statistics, taken again each time the index has doubled since they were last
   * taken: a plan chosen from the statistics of a near-empty index (a server started on a young
   * log) would scan every row once the index has grown. A sample (analysis_limit) keeps it cheap.
   */
  private keepStatisticsTrue(position: bigint | undefined): void {
    if (position === undefined || this.bulk !== undefined) return;
    const analyzedAt = BigInt(this.statements.analyzedAt.get() ?? '0');
    if (position < 1000n || position < analyzedAt * 2n) return;
    this.analyze(position);
  }

  private analyze(position: bigint | undefined): void {
    this.db.pragma('analysis_limit = 1000');
    this.db.exec('ANALYZE');
    if (position !== undefined) this.statements.setMeta.run('analyzed_at', position.toString());
  }

  private insert(recorded: RecordedEvent, time: number): void {
    const event = indexedEventOf(recorded);
    // A family event that does not name its login (TokenRevoked) is the login's all the same.
    const apiLoginId = event.apiLoginId ?? (event.familyId === undefined ? undefined : this.loginOfFamily(event.familyId));
    const { statements } = this;
    // An access event counts for its account: one that names none (no such event today) is not kept for access-at.
    const { accountId } = event;
    const access = accountId === undefined ? undefined : event.access;
    statements.insertEvent.run(
      event.position,
      event.type,
      time,
      event.accountId ?? null,
      event.familyId ?? null,
      event.generation ?? null,
      event.reason ?? null,
      event.requestId ?? null,
      event.sourceAddress ?? null,
      event.actor ?? null,
      apiLoginId ?? null,
      event.apiId ?? null,
      access === undefined ? null : JSON.stringify(access),
    );
    if (access === undefined || accountId === undefined) return;
    const grant = grantOf(access);
    if (grant.span === undefined) return;
    // A family's events are found by its id; another grant is this one event, found by its position.
    const single = grant.kind === 'single';
    this.saveGrant({
      grantId: single ? `@${event.position}` : grant.familyId,
      accountId,
      firstAt: grant.span.from,
      lastExpiresAt: grant.span.until,
      apiLoginId: single ? null : (apiLoginId ?? null),
      position: single ? event.position : null,
    });
  }

  /** A grant's span grows to cover this one; gathered in memory during a bulk load. */
  private saveGrant(row: GrantRow): void {
    const gathered = this.bulk?.grants;
    if (gathered === undefined) {
      this.writeGrant(row);
      return;
    }
    const known = gathered.get(row.grantId);
    if (known === undefined) gathered.set(row.grantId, { ...row });
    else {
      known.firstAt = Math.min(known.firstAt, row.firstAt);
      known.lastExpiresAt = Math.max(known.lastExpiresAt, row.lastExpiresAt);
    }
    if (gathered.size >= gatheredGrants) this.writeGatheredGrants();
  }

  /** In key order, so that each page of the grants table is written once per batch rather than once per grant. */
  private writeGatheredGrants(): void {
    const gathered = this.bulk?.grants;
    if (gathered === undefined) return;
    for (const id of [...gathered.keys()].sort()) this.writeGrant(gathered.get(id)!);
    gathered.clear();
  }

  private writeGrant(row: GrantRow): void {
    this.statements.upsertGrant.run(row.grantId, row.accountId, row.firstAt, row.lastExpiresAt, row.apiLoginId, row.position);
  }

  private loginOfFamily(familyId: string): string | undefined {
    return this.bulk?.grants.get(familyId)?.apiLoginId ?? this.statements.grantLogin.get(familyId)?.api_login_id ?? undefined;
  }

  /** One page of the rows matching `query`, in log order; AuditQueryOverBudget past `budgetMs`. */
  events(query: EventQuery, budgetMs?: number): EventPage {
    const where: string[] = [];
    const parameters: (string | number | bigint)[] = [];
    const match = (column: string, value: string | undefined) => {
      if (value === undefined) return;
      where.push(`${column} = ?`);
      parameters.push(value);
    };
    match('account_id', query.account);
    match('family_id', query.family);
    match('api_login_id', query.apiLoginId);
    match('api_id', query.apiId);
    if (query.types.length > 0) {
      where.push(`type IN (${query.types.map(() => '?').join(', ')})`);
      parameters.push(...query.types);
    }
    // Times never go backwards along the index, so a time range is a range of positions: found in
    // the time index with one lookup each, then read in position order like any other filter.
    const firstAtOrAfter = `COALESCE((SELECT position FROM events WHERE time >= ? ORDER BY time, position LIMIT 1), ${maxIndexedPosition})`;
    if (query.since !== undefined) {
      where.push(`position >= ${firstAtOrAfter}`);
      parameters.push(query.since);
    }
    if (query.until !== undefined) {
      where.push(`position < ${firstAtOrAfter}`);
      parameters.push(query.until);
    }
    if (query.after !== undefined) {
      where.push('position > ?');
      parameters.push(query.after);
    }
    // First, so that SQLite evaluates it for every row it visits, not only for rows the other terms let through.
    const sql = `SELECT ${rowColumns} FROM events WHERE ${['tessera_in_budget()', ...where].join(' AND ')} ORDER BY position LIMIT ?`;
    const statement = this.query(sql);
    return this.withinBudget(budgetMs, () =>
      this.db.transaction((): EventPage => {
        const tuples = statement.all(...parameters, query.limit + 1);
        const rows = tuples.slice(0, query.limit).map(toAuditRow);
        const more = tuples.length > query.limit ? BigInt(rows[rows.length - 1]!.position) : undefined;
        return { rows, more, logPosition: this.position() };
      })(),
    );
  }

  /** The plan SQLite uses for access-at's page of grants, as EXPLAIN QUERY PLAN prints it. */
  accessAtPlan(): string[] {
    return explainAccessAt(this.db);
  }

  /** The same plan, in another connection to an index file: a read-only one beside a running server's. */
  static accessAtPlanIn(db: Database.Database): string[] {
    // A connection of its own has no budget to keep; the function must exist for the statement to compile.
    db.function('tessera_in_budget', { deterministic: false }, () => 1);
    return explainAccessAt(db);
  }

  /**
   * How many of the account's grants access-at's page query visits (each row its WHERE looks at
   * calls the budget check once), in another connection to an index file: a page must cost a page.
   */
  static accessAtRowsVisitedIn(db: Database.Database, accountId: string, at: number, limit: number, after?: AccessAtCursor): number {
    let visited = 0;
    db.function('tessera_in_budget', { deterministic: false }, () => {
      visited += 1;
      return 1;
    });
    const parameters: AccessGrantsParameters = { account: accountId, at, never: Number.MAX_SAFE_INTEGER, ...accessGrantsFrom(at, after), limit: limit + 1 };
    db.prepare<[AccessGrantsParameters]>(accessGrantsSql).all(parameters);
    return visited;
  }

  private withinBudget<T>(budgetMs: number | undefined, run: () => T): T {
    if (budgetMs === undefined) return run();
    this.budget = { deadline: performance.now() + budgetMs, ms: budgetMs };
    try {
      return run();
    } finally {
      this.budget = undefined;
    }
  }

  /**
   * Which of the account's tokens were usable at `at` (epoch seconds), one page of grants at a
   * time: the grants whose span covers the instant, in the order they expire from it on (those
   * found first are the ones that lived around `at`), each replayed from its access events, with
   * the account's cuts. Undefined for an account the index has never seen. AuditQueryOverBudget
   * past `budgetMs`.
   */
  accessAt(
    accountId: string,
    at: number,
    query: AccessAtQuery = { limit: Number.MAX_SAFE_INTEGER },
    budgetMs?: number,
    archived: readonly ArchivedGrant[] = [],
  ): AccessAtAnswer | undefined {
    return this.withinBudget(budgetMs, () =>
      this.db.transaction((): AccessAtAnswer | undefined => {
        if (this.statements.knownAccount.get(accountId) === undefined) return undefined;
        const logPosition = this.position();
        // Before the account's first event nothing of it existed: no grant needs a look.
        const since = this.statements.accountSince.get(accountId);
        if (since === undefined || at * 1000 < since) return { families: [], legacyTokens: [], logPosition, more: undefined };
        const never = Number.MAX_SAFE_INTEGER;
        const after = query.after ?? { lastExpiresAt: 0, grantId: '' };
        const limit = Math.min(query.limit, Number.MAX_SAFE_INTEGER - 1);
        const hot = this.statements.accessGrants.all({ account: accountId, at, never, ...accessGrantsFrom(at, query.after), limit: limit + 1 });
        // The archive's grants join the hot ones in the same order, so a page and its cursor do not
        // change as a family moves from the hot index to the archive; one found in both counts once.
        const merged = new Map<string, { grantId: string; lastExpiresAt: number; position: bigint | null; archived?: ArchivedGrant }>();
        for (const [grantId, lastExpiresAt, position] of hot) merged.set(grantId, { grantId, lastExpiresAt: Number(lastExpiresAt), position });
        for (const grant of archived) {
          if (grant.lastExpiresAt <= at || grant.firstAt > at || !isAfter(grant, after)) continue;
          const known = merged.get(grant.grantId);
          merged.set(grant.grantId, { grantId: grant.grantId, lastExpiresAt: Math.max(grant.lastExpiresAt, known?.lastExpiresAt ?? 0), position: known?.position ?? null, archived: grant });
        }
        const grants = [...merged.values()].sort((a, b) => a.lastExpiresAt - b.lastExpiresAt || (a.grantId < b.grantId ? -1 : a.grantId > b.grantId ? 1 : 0)).slice(0, limit + 1);
        const page = grants.slice(0, limit);
        const access: string[] = this.statements.accessCuts.all({ account: accountId, at, never });
        const events: { position: bigint; access: AccessEvent }[] = [];
        for (const grant of page) {
          const byPosition = new Map<bigint, AccessEvent>();
          for (const archivedEvent of grant.archived?.events ?? []) byPosition.set(archivedEvent.position, archivedEvent.access);
          // Casts: the index's own JSON of an AccessEvent; an index of another version is rebuilt, never read.
          if (grant.archived === undefined || !grant.grantId.startsWith('@')) {
            if (!grant.grantId.startsWith('@')) for (const [position, json] of this.statements.familyAccess.all(grant.grantId)) byPosition.set(position, JSON.parse(json) as AccessEvent);
            else if (grant.position !== null) {
              const single = this.statements.singleAccess.get(grant.position);
              if (single !== undefined) byPosition.set(grant.position, JSON.parse(single) as AccessEvent); // cast: as above
            }
          }
          for (const [position, event] of byPosition) events.push({ position, access: event });
        }
        events.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
        const last = page[page.length - 1];
        const more = grants.length > limit && last !== undefined ? { lastExpiresAt: last.lastExpiresAt, grantId: last.grantId } : undefined;
        // Cast: the index's own JSON of an AccessEvent (written above); an index of another version is rebuilt, never read.
        return { ...accessAt([...access.map((json) => JSON.parse(json) as AccessEvent), ...events.map((event) => event.access)], at), logPosition, more };
      })(),
    );
  }

  /** The index's rows at these positions, as the archive keeps them (undefined for a position the index does not hold). */
  rowsAt(positions: readonly bigint[]): Map<bigint, IndexRowForArchive> {
    const rows = new Map<bigint, IndexRowForArchive>();
    this.db.transaction(() => {
      for (const position of positions) {
        const row = this.statements.archiveRow.get(position);
        if (row === undefined) continue;
        const [, type, time, account, family, generation, reason, request, source, actor, login, apiId, access] = row;
        rows.set(position, {
          type,
          time: Number(time),
          accountId: account ?? undefined,
          familyId: family ?? undefined,
          generation: generation === null ? undefined : Number(generation),
          reason: reason ?? undefined,
          requestId: request ?? undefined,
          sourceAddress: source ?? undefined,
          actor: actor ?? undefined,
          apiLoginId: login ?? undefined,
          apiId: apiId ?? undefined,
          // Cast: the index's own JSON of an AccessEvent, as above.
          access: access === null ? undefined : (JSON.parse(access) as AccessEvent),
        });
      }
    })();
    return rows;
  }

  /**
   * Removes archived events from the index: their rows and the grants they made (a family's, or a
   * v1 token's own). Positions it does not hold are skipped, so a removal repeated after a crash
   * changes nothing. The space goes back to the file system in steps (incremental vacuum).
   */
  forget(positions: readonly bigint[], grantIds: readonly string[]): void {
    const chunk = 2000;
    for (let start = 0; start < Math.max(positions.length, grantIds.length); start += chunk) {
      this.db
        .transaction(() => {
          this.statements.forgetEvents.run(`[${positions.slice(start, start + chunk).join(',')}]`);
          this.statements.forgetGrants.run(JSON.stringify(grantIds.slice(start, start + chunk)));
        })
        .immediate();
    }
    this.db.pragma('incremental_vacuum');
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.abandonBulkLoad();
    // Keeps the query planner's statistics current, as SQLite recommends before closing.
    this.db.pragma('optimize');
    this.db.close();
  }

  private query(sql: string): Database.Statement<unknown[], RowTuple> {
    let statement = this.queries.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[], RowTuple>(sql).raw(true);
      this.queries.set(sql, statement);
    }
    return statement;
  }
}

function toAuditRow([position, type, time, account, family, generation, reason, request, source, actor]: RowTuple): AuditRow {
  return {
    position,
    type,
    time: new Date(time).toISOString(),
    account_id: account,
    family_id: family,
    generation,
    reason,
    request_id: request,
    source_address: source,
    actor,
  };
}

/**
 * Errors that say the file cannot serve as an index: not a database, damaged, or one this user may
 * not write (made by root, say). A busy or locked file is another process at work, not damage.
 */
function unusableFile(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_READONLY') || code === 'SQLITE_CANTOPEN' || code === 'EACCES' || code === 'EPERM';
}

function tableExists(db: Database.Database, name: string): boolean {
  return db.prepare<[string], { found: number }>("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

