import { describe, expect, it } from 'vitest';
import type { AccountRow } from '@tessera/accounts';
import { accountPage, accountPageLimit, InvalidAccountPage } from './account-pages.js';

const row = (accountId: string, name: string): AccountRow => ({ account_id: accountId, name, permissions: [], api_login_ids: [], legacy_api_ids: [], status: 'enabled' });
const rows = [row('a1', 'Shop'), row('a2', 'Other'), row('a3', 'Shop'), row('a4', 'Shop'), row('a5', 'Shop')];
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
    const grown = [...rows, row('a6', 'New')];
    expect(ids(accountPage(grown, { limit: 3, cursor: first.nextCursor! }))).toEqual(['a4', 'a5', 'a6']);
    const many = Array.from({ length: accountPageLimit.default + 1 }, (_, index) => row(`b${index}`, 'Many'));
    expect(accountPage(many, {}).accounts).toHaveLength(accountPageLimit.default);
  });

  it('refuses a cursor that names no account of the list', () => {
    expect(() => accountPage(rows, { cursor: Buffer.from('zz').toString('base64url') })).toThrow(InvalidAccountPage);
    expect(() => accountPage(rows, { cursor: 'not/base64url' })).toThrow(InvalidAccountPage);
    // A cursor of another filter's list: its account is not among these.
    const other = accountPage(rows, { name: 'Other', limit: 1 });
    expect(() => accountPage(rows, { name: 'Shop', cursor: Buffer.from(other.accounts[0]!.account_id).toString('base64url') })).toThrow(InvalidAccountPage);
  });
});
