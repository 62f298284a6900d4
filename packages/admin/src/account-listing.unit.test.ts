import { describe, expect, it } from 'vitest';
import { createAccountService } from '@tessera/accounts';
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

    expect([...listing.rowsAfter()!]).toEqual([
      { account_id: a.accountId, name: 'A', permissions: ['y'], api_login_ids: [a.apiLoginId], legacy_api_ids: [a.legacy!.apiId], status: 'enabled' },
      { account_id: b.accountId, name: 'B', permissions: [], api_login_ids: [b.apiLoginId], legacy_api_ids: [], status: 'enabled' },
    ]);
    expect((await accounts.list()).map((summary) => summary.accountId)).toEqual([a.accountId, b.accountId]);
    expect(listing.row(b.accountId)?.name).toBe('B');
    expect(listing.row('acct-unknown')).toBeUndefined();
  });

  it('a page resumes at its cursor without a walk from the first account, and looks at no more than it needs and one more', () => {
    const listing = new AccountListing();
    let folded = 0;
    for (let index = 0; index < 1_000; index += 1) listing.apply({ type: 'AccountRegistered', v: 1, accountId: `a${index}`, name: 'Shop', permissions: [], at: 1_800_000_000 });
    const row = listing.row.bind(listing);
    listing.row = (accountId) => {
      folded += 1;
      return row(accountId);
    };
    const first = accountPage(listing, { limit: 10 });
    expect(first.accounts).toHaveLength(10);
    expect(folded).toBe(11);
    folded = 0;
    const later = accountPage(listing, { limit: 10, cursor: Buffer.from('a500').toString('base64url') });
    expect(later.accounts.map((account) => account.account_id)).toEqual(Array.from({ length: 10 }, (_, index) => `a${501 + index}`));
    expect(folded).toBe(11);
    expect(listing.rowsAfter('a-nobody')).toBeUndefined();
  });
});
