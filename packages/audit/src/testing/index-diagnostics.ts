/**
 * Diagnostics of the audit index that only tests read: the plan SQLite chooses for access-at's page
 * of grants, how many grants that page visits, and the index connection's page cache. Each looks
 * at a connection to an index file, not through the index's API, so nothing here is in the product.
 */
import type Database from 'better-sqlite3';
import { accessGrantsFrom, accessGrantsSql, type AccessAtCursor, type AccessGrantsParameters } from '../access-grants.js';
import type { AuditIndex } from '../audit-index.js';

/** The plan SQLite uses for access-at's page of grants, as EXPLAIN QUERY PLAN prints it, in another connection to an index file (a read-only one beside a running server's). */
export function accessAtPlanIn(db: Database.Database): string[] {
  // A connection of its own has no budget to keep; the function must exist for the statement to compile.
  db.function('tessera_in_budget', { deterministic: false }, () => 1);
  const parameters: AccessGrantsParameters = { account: 'a', at: 0, never: Number.MAX_SAFE_INTEGER, ...accessGrantsFrom(0, undefined), limit: 1 };
  return db
    .prepare<[AccessGrantsParameters], { detail: string }>(`EXPLAIN QUERY PLAN ${accessGrantsSql}`)
    .all(parameters)
    .map((row) => row.detail);
}

/**
 * How many of the account's grants access-at's page query visits (each row its WHERE looks at
 * calls the budget check once), in another connection to an index file: a page must cost a page.
 */
export function accessAtRowsVisitedIn(db: Database.Database, accountId: string, at: number, limit: number, after?: AccessAtCursor): number {
  let visited = 0;
  db.function('tessera_in_budget', { deterministic: false }, () => {
    visited += 1;
    return 1;
  });
  const parameters: AccessGrantsParameters = { account: accountId, at, never: Number.MAX_SAFE_INTEGER, ...accessGrantsFrom(at, after), limit: limit + 1 };
  db.prepare<[AccessGrantsParameters]>(accessGrantsSql).all(parameters);
  return visited;
}

/** The page cache of the index's own connection, in KiB: a setting of that connection, which no other can read. */
export function pageCacheKiB(index: AuditIndex): number {
  // Cast: the connection is the index's private field; only this diagnostic reads it, to check a setting nothing public exposes.
  const { db } = index as unknown as { readonly db: Database.Database };
  return -Number(db.pragma('cache_size', { simple: true }));
}
