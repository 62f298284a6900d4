import type Database from 'better-sqlite3';
import { maxIndexedPosition } from './audit-index-schema.js';
import type { AuditRow } from './audit-row.js';
import type { EventQuery } from './event-query.js';
import type { IndexMeta } from './index-meta.js';
import type { QueryBudget } from './query-budget.js';

/** A page of the audit trail and the log position the index reflected when it was read. */
export interface EventPage {
  readonly rows: readonly AuditRow[];
  /** The position of the page's last row when more rows match after it. */
  readonly more: bigint | undefined;
  readonly logPosition: bigint | undefined;
}

type RowTuple = [position: string, type: string, time: number, account: string | null, family: string | null, generation: number | null, reason: string | null, request: string | null, source: string | null, actor: string | null];

const rowColumns = 'CAST(position AS TEXT), type, time, account_id, family_id, generation, reason, request_id, source_address, actor';

/** The events query over the index: the rows matching a query's filters, a page at a time, in log order. */
export class IndexEvents {
  /** One prepared statement per shape of query (which filters it has), made when first asked. */
  private readonly statements = new Map<string, Database.Statement<unknown[], RowTuple>>();

  constructor(
    private readonly db: Database.Database,
    private readonly meta: IndexMeta,
    private readonly budget: QueryBudget,
  ) {}

  /** One page of the rows matching `query`, in log order; AuditQueryOverBudget past `budgetMs`. */
  page(query: EventQuery, budgetMs?: number): EventPage {
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
    const statement = this.prepared(`SELECT ${rowColumns} FROM events WHERE ${['tessera_in_budget()', ...where].join(' AND ')} ORDER BY position LIMIT ?`);
    return this.budget.within(budgetMs, () =>
      this.db.transaction((): EventPage => {
        const tuples = statement.all(...parameters, query.limit + 1);
        const rows = tuples.slice(0, query.limit).map(toAuditRow);
        const more = tuples.length > query.limit ? BigInt(rows[rows.length - 1]!.position) : undefined;
        return { rows, more, logPosition: this.meta.position() };
      })(),
    );
  }

  private prepared(sql: string): Database.Statement<unknown[], RowTuple> {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[], RowTuple>(sql).raw(true);
      this.statements.set(sql, statement);
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
