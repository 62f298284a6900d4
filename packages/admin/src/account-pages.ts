import type { AccountRow } from '@tessera/accounts';
import { CodedError } from '@tessera/contracts';

/** A page of `GET /admin/v1/accounts`: at most this many rows, so one answer stays small whatever the log holds. */
export const accountPageLimit = { default: 100, max: 500 } as const;

/** A cursor or limit the list cannot use: a 400, as any other invalid account input. */
export class InvalidAccountPage extends CodedError {
  readonly code = 'ERR_INVALID_ACCOUNT_INPUT';
}

/**
 * One page of accounts in log order (the order they were created in), filtered by exact name. The
 * cursor names the last account of the page before, so a page is the same whatever was created
 * after it: an account is never removed from the log, so the one a cursor names is always found.
 * Walks the rows only until the page is full and one more is seen.
 */
export function accountPage(rows: Iterable<AccountRow>, query: { name?: string | undefined; limit?: number | undefined; cursor?: string | undefined }): { accounts: AccountRow[]; nextCursor: string | null } {
  const limit = query.limit ?? accountPageLimit.default;
  const after = query.cursor === undefined ? undefined : accountIdOf(query.cursor);
  let started = after === undefined;
  const accounts: AccountRow[] = [];
  for (const row of rows) {
    if (query.name !== undefined && row.name !== query.name) continue;
    if (!started) {
      started = row.account_id === after;
      continue;
    }
    if (accounts.length === limit) return { accounts, nextCursor: cursorOf(accounts[accounts.length - 1]!.account_id) };
    accounts.push(row);
  }
  if (!started) throw new InvalidAccountPage('cursor: not a cursor of this list (take next_cursor from the page before, with the same name filter)');
  return { accounts, nextCursor: null };
}

/** Opaque to callers: base64url of the last account id. */
function cursorOf(accountId: string): string {
  return Buffer.from(accountId, 'utf8').toString('base64url');
}

function accountIdOf(cursor: string): string {
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(cursor)) throw new InvalidAccountPage('cursor: not a cursor of this list');
  return Buffer.from(cursor, 'base64url').toString('utf8');
}
