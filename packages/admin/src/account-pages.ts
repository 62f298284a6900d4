import type { AccountRow } from '@tessera/accounts';
import { CodedError } from '@tessera/contracts';

/** A page of `GET /admin/v1/accounts`: at most this many rows, so one answer stays small whatever the log holds. */
export const accountPageLimit = { default: 100, max: 500 } as const;

/**
 * At most this many accounts are looked at for one page of a filtered list (a name or a search), so
 * a search that matches few of many accounts still answers in a bounded time: the page then holds
 * the matches among those, and its next_cursor goes on from the last account looked at.
 */
export const accountScanBudget = 10_000;

/** A cursor or limit the list cannot use: a 400, as any other invalid account input. */
export class InvalidAccountPage extends CodedError {
  readonly code = 'ERR_INVALID_ACCOUNT_INPUT';
}

/** The accounts in the order made, from just after a given one (an AccountListing). */
export interface OrderedAccounts {
  /** Undefined when `after` names no account. */
  rowsAfter(after?: string): Iterable<AccountRow> | undefined;
}

export interface AccountPageQuery {
  /** Only the accounts with exactly this name. */
  readonly name?: string | undefined;
  /** Only the accounts whose name, account id, API Login ID or legacy API ID holds this text, in any case. */
  readonly q?: string | undefined;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

/**
 * One page of accounts in log order (the order they were created in), filtered by exact name or by
 * a search. The cursor names the last account looked at, so a page is the same whatever was created
 * after it: an account is never removed from the log, so the one a cursor names is always found, and
 * a cursor holds for any filter. Looks at no more than the page needs plus one, and at no more than
 * accountScanBudget accounts when filtered: a page may then hold fewer than `limit` accounts (none,
 * even) with a next_cursor to go on from.
 */
export function accountPage(listing: OrderedAccounts, query: AccountPageQuery): { accounts: AccountRow[]; nextCursor: string | null } {
  const limit = query.limit ?? accountPageLimit.default;
  const rows = listing.rowsAfter(query.cursor === undefined ? undefined : accountIdOf(query.cursor));
  if (rows === undefined) throw new InvalidAccountPage('cursor: not a cursor of this list (take next_cursor from the page before)');
  const matches = matcher(query);
  const accounts: AccountRow[] = [];
  let looked = 0;
  let lastLooked: string | undefined;
  for (const row of rows) {
    if (looked === accountScanBudget) return { accounts, nextCursor: cursorOf(lastLooked!) };
    if (matches(row)) {
      if (accounts.length === limit) return { accounts, nextCursor: cursorOf(accounts[accounts.length - 1]!.account_id) };
      accounts.push(row);
    }
    looked += 1;
    lastLooked = row.account_id;
  }
  return { accounts, nextCursor: null };
}

function matcher(query: AccountPageQuery): (row: AccountRow) => boolean {
  const search = query.q?.toLowerCase();
  return (row) => {
    if (query.name !== undefined && row.name !== query.name) return false;
    if (search === undefined) return true;
    return [row.name, row.account_id, ...row.api_login_ids, ...row.legacy_api_ids].some((text) => text.toLowerCase().includes(search));
  };
}

/** Opaque to callers: base64url of the last account id. */
function cursorOf(accountId: string): string {
  return Buffer.from(accountId, 'utf8').toString('base64url');
}

function accountIdOf(cursor: string): string {
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(cursor)) throw new InvalidAccountPage('cursor: not a cursor of this list');
  return Buffer.from(cursor, 'base64url').toString('utf8');
}
