import { describe, expect, it } from 'vitest';
import type { AccountRow } from '@tessera/accounts';
import { accountPage, accountPageLimit, accountScanBudget, InvalidAccountPage, type OrderedAccounts } from './account-pages.js';

const row = (accountId: string, name: string): AccountRow => ({ account_id: accountId, name, permissions: [], api_login_ids: [], legacy_api_ids: [], status: 'enabled' });
/** The accounts in the order made, as AccountListing hands them (it is tested on its own). */
const ordered = (rows: AccountRow[]): OrderedAccounts => ({
  rowsAfter: (after) => {
    const place = after === undefined ? -1 : rows.findIndex((each) => each.account_id === after);
    return place === -1 && after !== undefined ? undefined : rows.slice(place + 1);
  },
});
const rows = ordered([row('a1', 'Shop'), row('a2', 'Other'), row('a3', 'Shop'), row('a4', 'Shop'), row('a5', 'Shop')]);
const ids = (page: { accounts: AccountRow[] }) => page.accounts.map((account) => account.account_id);

describe('a page of accounts', () => {
  it('walks every account with that exact name once, in log order, and says when there is no more', () => {
    const first = accountPage(rows, { name: 'Shop', limit: 2 });
    expect(ids(first)).toEqual(['a1', 'a3']);
    const second = accountPage(rows, { name: 'Shop', limit: 2, cursor: first.nextCursor! });
    expect(ids(second)).toEqual(['a4', 'a5']);
    expect(second.nextCursor).toBeNull();
    expect(ids(accountPage(rows, { name: 'shop' }))).toEqual([]);
  });

  it('holds still while accounts are made after the cursor, and takes the default limit', () => {
    const first = accountPage(rows, { limit: 3 });
    const grown = ordered([...rows.rowsAfter()!, row('a6', 'New')]);
    expect(ids(accountPage(grown, { limit: 3, cursor: first.nextCursor! }))).toEqual(['a4', 'a5', 'a6']);
    const many = ordered(Array.from({ length: accountPageLimit.default + 1 }, (_, index) => row(`b${index}`, 'Many')));
    expect(accountPage(many, {}).accounts).toHaveLength(accountPageLimit.default);
  });

  it('refuses a cursor that names no account of the list', () => {
    expect(() => accountPage(rows, { cursor: Buffer.from('zz').toString('base64url') })).toThrow(InvalidAccountPage);
    expect(() => accountPage(rows, { cursor: 'not/base64url' })).toThrow(InvalidAccountPage);
  });

  it('searches names, account ids, API Login IDs and legacy API IDs in any case', () => {
    const searched = ordered([
      { ...row('acct_1', 'Acme Shop'), api_login_ids: ['tsl_AAA'] },
      { ...row('acct_2', 'Other'), api_login_ids: ['tsl_BBB'], legacy_api_ids: ['tla_acme'] },
      { ...row('acct_3', 'Unrelated'), api_login_ids: ['tsl_CCC'] },
      { ...row('acct_ACME', 'Third'), api_login_ids: ['tsl_DDD'] },
    ]);
    expect(ids(accountPage(searched, { q: 'ACME' }))).toEqual(['acct_1', 'acct_2', 'acct_ACME']);
    expect(ids(accountPage(searched, { q: 'tsl_ccc' }))).toEqual(['acct_3']);
    expect(ids(accountPage(searched, { q: 'acme', name: 'Other' }))).toEqual(['acct_2']);
    expect(accountPage(searched, { q: 'nothing like it' })).toEqual({ accounts: [], nextCursor: null });
  });

  it('looks at no more than the scan budget for one filtered page, and goes on from the last account looked at', () => {
    const many = ordered([...Array.from({ length: accountScanBudget + 5 }, (_, index) => row(`m${index}`, 'Many')), row('found', 'Needle')]);
    const first = accountPage(many, { q: 'needle' });
    expect(first.accounts).toEqual([]);
    expect(Buffer.from(first.nextCursor!, 'base64url').toString()).toBe(`m${accountScanBudget - 1}`);
    const second = accountPage(many, { q: 'needle', cursor: first.nextCursor! });
    expect(ids(second)).toEqual(['found']);
    expect(second.nextCursor).toBeNull();
  });
});
