/** access-at pages over the account's grants in the order they expire: the last one a page read. */
export interface AccessAtCursor {
  readonly lastExpiresAt: number;
  readonly grantId: string;
}

export interface AccessGrantsParameters {
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
 * OR), SQLite ranges the index from the looser one and reads every grant the account ever had, so
 * a page would cost as much as the account's whole history. Expiries are whole seconds, so ending
 * after `at` is (last_expires_at, grant_id) > (floor(at) + 1, ''): no grant id is empty.
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
export const accessGrantsSql = `SELECT grant_id, last_expires_at, position FROM grants INDEXED BY grants_account
  WHERE tessera_in_budget() AND account_id = @account AND (last_expires_at, grant_id) > (@fromExpiresAt, @fromGrant) AND last_expires_at < @never
    AND first_at <= @at
  ORDER BY last_expires_at, grant_id LIMIT @limit`;
