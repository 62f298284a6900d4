import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@tessera/events';
import { grantOf } from './access-at.js';
import { indexSchema, secondaryIndexes } from './audit-index-schema.js';
import { indexedEventOf } from './audit-row.js';
import { pageCacheKiB } from './index-file.js';
import type { IndexMeta } from './index-meta.js';
import type { PlannerStatistics } from './index-statistics.js';

/** What apply() did: the position the index now reflects; `gap` when the batch did not follow it. */
export interface ApplyOutcome {
  readonly position: bigint | undefined;
  readonly gap: boolean;
}

interface GrantRow {
  readonly grantId: string;
  readonly accountId: string;
  firstAt: number;
  lastExpiresAt: number;
  readonly apiLoginId: string | null;
  readonly position: bigint | null;
}

/** How many grants a bulk load gathers before it writes them (in key order): bounds its memory. */
const gatheredGrants = 200_000;

/** How many positions or grant ids forget() removes per transaction: a writer never holds the file for long. */
const forgetChunk = 2000;

/**
 * What goes into the index and what leaves it: events applied in order from the log (one by one,
 * or in one bulk load into an empty index), and events forgotten once archived. Each batch is
 * applied in one transaction that first reads the position the index reflects, so several
 * processes may feed one file (the server and `tessera audit`) and none is applied twice.
 */
export class IndexIngest {
  private readonly statements;
  /** During a bulk load: the grants gathered since they were last written, by grant id. */
  private bulk: { readonly grants: Map<string, GrantRow> } | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly meta: IndexMeta,
    private readonly statistics: PlannerStatistics,
  ) {
    this.statements = {
      insertEvent: db.prepare<[bigint, string, number, ...(string | number | null)[]]>(
        'INSERT INTO events (position, type, time, account_id, family_id, generation, reason, request_id, source_address, actor, api_login_id, api_id, access) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      upsertGrant: db.prepare<[string, string, number, number, string | null, bigint | null]>(
        `INSERT INTO grants (grant_id, account_id, first_at, last_expires_at, api_login_id, position) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (grant_id) DO UPDATE SET first_at = MIN(first_at, excluded.first_at), last_expires_at = MAX(last_expires_at, excluded.last_expires_at)`,
      ),
      grantLogin: db.prepare<[string], { api_login_id: string | null }>('SELECT api_login_id FROM grants WHERE grant_id = ?'),
      // The positions and grant ids as JSON arrays: one call into SQLite per chunk rather than one per row.
      forgetEvents: db.prepare<[string]>('DELETE FROM events WHERE position IN (SELECT value FROM json_each(?))'),
      forgetGrants: db.prepare<[string]>('DELETE FROM grants WHERE grant_id IN (SELECT value FROM json_each(?))'),
    };
  }

  /**
   * Filling an empty index from a whole log, in one transaction: the secondary indexes are dropped
   * and made again by finishBulkLoad() with one sort each, and grants are gathered in memory and
   * written in key order, rather than every index kept in order row by row, which touches a page of
   * each per row. One transaction, so that a process stopped midway leaves the index empty as it was
   * (the next start loads again), and another process meanwhile waits or is told the index is busy.
   * False, doing nothing, when the index is not empty.
   */
  startBulkLoad(): boolean {
    if (this.bulk !== undefined || this.meta.position() !== undefined) return false;
    this.db.exec('BEGIN IMMEDIATE');
    // Another process may have filled it between the look and the lock.
    if (this.meta.position() !== undefined) {
      this.db.exec('ROLLBACK');
      return false;
    }
    for (const name of secondaryIndexes) this.db.exec(`DROP INDEX IF EXISTS ${name}`);
    this.db.pragma(`cache_size = -${pageCacheKiB.bulk}`);
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
    this.db.pragma(`cache_size = -${pageCacheKiB.usual}`);
    this.statistics.take(this.meta.position());
  }

  /** Drops a bulk load that cannot finish (the process stops, the log failed): the index is empty again. */
  abandonBulkLoad(): void {
    if (this.bulk === undefined) return;
    this.bulk = undefined;
    this.db.exec('ROLLBACK');
    this.db.pragma(`cache_size = -${pageCacheKiB.usual}`);
  }

  /**
   * Applies events that follow `from` in the log (the position the caller read after), in one
   * transaction. Events the index already reflects are skipped, so a batch that overlaps another
   * process's is harmless. If the index reflects less than `from` (emptied by another process
   * meanwhile), nothing is applied and `gap` says to read again from `position`.
   */
  apply(batch: readonly RecordedEvent[], from: bigint | undefined): ApplyOutcome {
    const { meta } = this;
    const outcome = this.db
      .transaction((): ApplyOutcome => {
        const reflected = meta.position();
        if ((reflected ?? -1n) < (from ?? -1n)) return { position: reflected, gap: true };
        let lastTime = Number(meta.get('last_time') ?? 0);
        let last: RecordedEvent | undefined;
        for (const recorded of batch) {
          if (reflected !== undefined && recorded.position <= reflected) continue;
          if (reflected === undefined && last === undefined) {
            meta.set('first_event_id', recorded.eventId);
            meta.set('first_position', recorded.position.toString());
          }
          lastTime = Math.max(lastTime, recorded.recordedAt);
          this.insert(recorded, lastTime);
          last = recorded;
        }
        if (last === undefined) return { position: reflected, gap: false };
        meta.set('log_position', last.position.toString());
        meta.set('last_event_id', last.eventId);
        meta.set('last_time', String(lastTime));
        return { position: last.position, gap: false };
      })
      .immediate();
    // A bulk load takes them once, at its end.
    if (this.bulk === undefined) this.statistics.keepTrue(outcome.position);
    return outcome;
  }

  /**
   * Removes archived events from the index: their rows and the grants they made (a family's, or a
   * v1 token's own). Positions it does not hold are skipped, so a removal repeated after a crash
   * changes nothing. The space goes back to the file system in steps (incremental vacuum).
   */
  forget(positions: readonly bigint[], grantIds: readonly string[]): void {
    for (let start = 0; start < Math.max(positions.length, grantIds.length); start += forgetChunk) {
      this.db
        .transaction(() => {
          this.statements.forgetEvents.run(`[${positions.slice(start, start + forgetChunk).join(',')}]`);
          this.statements.forgetGrants.run(JSON.stringify(grantIds.slice(start, start + forgetChunk)));
        })
        .immediate();
    }
    this.db.pragma('incremental_vacuum');
  }

  private insert(recorded: RecordedEvent, time: number): void {
    const event = indexedEventOf(recorded);
    // A family event that does not name its login (TokenRevoked) is the login's all the same.
    const apiLoginId = event.apiLoginId ?? (event.familyId === undefined ? undefined : this.loginOfFamily(event.familyId));
    // An access event counts for its account: one that names none (no such event today) is not kept for access-at.
    const { accountId } = event;
    const access = accountId === undefined ? undefined : event.access;
    this.statements.insertEvent.run(
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
}
