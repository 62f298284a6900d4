import { describe, expect, it } from 'vitest';
import { createAccountService, type AccountRow } from '@tessera/accounts';
import { isEventOf, accountEventTypes } from '@tessera/events';
import { InMemoryEventStore } from '@tessera/event-store';
import { createSecretHasher } from '@tessera/tokens';
import { AccountListing } from './account-listing.js';
import { accountPage } from './account-pages.js';

describe('the account listing', () => {
  it('folds the account events it is handed into rows in the order the accounts were made, as the log-reading list shows them', async () => {
    const store = new InMemoryEventStore();
    const accounts = createAccountService({ store, hasher: createSecretHasher(Buffer.alloc(32, 1)), now: () => 1_800_000_000, actor: 'test' });
    const a = await accounts.create({ name: 'A', permissions: ['x'], legacy: true });
    const b = await accounts.create({ name: 'B', permissions: [], legacy: false });
    await accounts.setPermissions(a.accountId, ['y'], { revokeTokens: false });
    const listing = new AccountListing();
    for (const { event } of await store.readAll()) if (isEventOf(accountEventTypes, event)) listing.apply(event);

    expect([...listing.rows()]).toEqual([
      { account_id: a.accountId, name: 'A', permissions: ['y'], api_login_ids: [a.apiLoginId], legacy_api_ids: [a.legacy!.apiId], status: 'enabled' },
      { account_id: b.accountId, name: 'B', permissions: [], api_login_ids: [b.apiLoginId], legacy_api_ids: [], status: 'enabled' },
    ]);
    expect((await accounts.list()).map((summary) => summary.accountId)).toEqual([a.accountId, b.accountId]);
    expect(listing.row(b.accountId)?.name).toBe('B');
    expect(listing.row('acct-unknown')).toBeUndefined();
  });

  it('a page walks the rows only until it is full and has seen one more', () => {
    let walked = 0;
    function* rows(): Generator<AccountRow> {
      for (let index = 0; index < 1_000; index += 1) {
        walked += 1;
        yield { account_id: `a${index}`, name: 'Shop', permissions: [], api_login_ids: [], legacy_api_ids: [], status: 'enabled' };
      }
    }
    const page = accountPage(rows(), { limit: 10 });
    expect(page.accounts).toHaveLength(10);
    expect(page.nextCursor).not.toBeNull();
    expect(walked).toBe(11);
  });
});
