// Type-only, erased from the compiled script: the page reads the rows the admin API answers.
import type { AccountRow } from '@tessera/accounts';
import { call, query } from './api.js';
import { announce, button, element, field, form, input, showPage, table } from './dom.js';
import { secretPanel } from './secret-panel.js';
import { hasScope, notAllowed } from './session.js';

interface AccountPage {
  readonly accounts: readonly AccountRow[];
  readonly next_cursor: string | null;
}

/** A page of accounts, as the API bounds them. */
const pageSize = 25;

/** Accounts: search (name, account ID, API Login ID), create (its secret shown once), rotate a key, set permissions, disable and enable. */
export async function showAccounts(): Promise<void> {
  if (!hasScope('accounts:read')) {
    showPage('Accounts', notAllowed('accounts:read'));
    return;
  }
  const results = element('div', { id: 'account-results' });
  const secretSlot = element('div', { id: 'secret-slot' });
  const search = input({ name: 'q', type: 'search', autocomplete: 'off' });
  let searched = '';
  const list = async (cursor?: string) => {
    const page = await call<AccountPage>('GET', `/admin/v1/accounts${query({ q: searched, limit: pageSize, cursor })}`);
    results.replaceChildren(accountTable(page.accounts, () => list(cursor)), page.next_cursor ? button('Next page of accounts', () => list(page.next_cursor!)) : '');
  };
  showPage(
    'Accounts',
    form(
      'Search accounts',
      async () => {
        searched = search.value.trim();
        await list();
        announce(searched === '' ? 'Every account, in the order they were made.' : `Accounts matching ${searched}.`);
      },
      field('Search', search, 'Any part of a name, account ID, API Login ID or legacy API ID, in any case; empty lists every account.'),
      element('button', { type: 'submit' }, 'Search'),
    ),
    secretSlot,
    results,
    hasScope('accounts:write') ? createForm(secretSlot, () => list()) : notAllowed('accounts:write'),
  );
  await list();
}

function createForm(secretSlot: HTMLElement, refresh: () => Promise<void>): HTMLElement {
  const name = input({ name: 'new-name', autocomplete: 'off', required: '' });
  const permissions = input({ name: 'new-permissions', autocomplete: 'off' });
  return element(
    'section',
    { 'aria-labelledby': 'create-title' },
    element('h2', { id: 'create-title' }, 'Create an account'),
    form(
      'Create an account',
      async () => {
        const created = await call<{ account_id: string; api_login_id: string; transaction_key: string }>('POST', '/admin/v1/accounts', { name: name.value.trim(), permissions: words(permissions.value) });
        name.value = '';
        permissions.value = '';
        secretSlot.replaceChildren(secretPanel(`Account ${created.account_id} created`, [['Account ID', created.account_id], ['API Login ID', created.api_login_id]], ['Transaction key', created.transaction_key]));
        await refresh();
        secretSlot.querySelector<HTMLElement>('h2')?.setAttribute('tabindex', '-1');
        secretSlot.querySelector<HTMLElement>('h2')?.focus();
      },
      field('Account name', name),
      field('Permissions', permissions, 'Separated by spaces or commas, e.g. transaction:charge'),
      element('button', { type: 'submit' }, 'Create account'),
    ),
  );
}

function accountTable(accounts: readonly AccountRow[], refresh: () => Promise<void>): HTMLElement {
  if (accounts.length === 0) return element('p', {}, 'No account found.');
  const writable = hasScope('accounts:write');
  return table(
    'Accounts',
    ['Name', 'Account ID', 'API Login IDs', 'Permissions', 'Status', 'Actions'],
    accounts.map((account) => [
      account.name,
      element('code', {}, account.account_id),
      account.api_login_ids.join(', ') || '-',
      account.permissions.join(' ') || '-',
      account.status,
      element(
        'div',
        { class: 'actions' },
        element('a', { href: `#families/${encodeURIComponent(account.account_id)}`, 'aria-label': `Families of ${account.name}` }, 'Families'),
        writable ? button('Rotate key', () => rotateKey(account, refresh), { 'aria-label': `Rotate key of ${account.name}` }) : null,
        writable ? button('Permissions', () => editPermissions(account, refresh), { 'aria-label': `Permissions of ${account.name}` }) : null,
        writable
          ? account.status === 'enabled'
            ? button('Disable', () => setStatus(account, 'disable', refresh), { 'aria-label': `Disable ${account.name}` })
            : button('Enable', () => setStatus(account, 'enable', refresh), { 'aria-label': `Enable ${account.name}` })
          : null,
      ),
    ]),
  );
}

async function rotateKey(account: AccountRow, refresh: () => Promise<void>): Promise<void> {
  if (!confirm(`Rotate the key of ${account.name}? The old key is refused from now on.`)) return;
  const rotated = await call<{ api_login_id: string; transaction_key: string }>('POST', `/admin/v1/accounts/${encodeURIComponent(account.account_id)}/rotate-key`, {});
  document.getElementById('secret-slot')?.replaceChildren(secretPanel(`New key for ${account.name}`, [['API Login ID', rotated.api_login_id]], ['Transaction key', rotated.transaction_key]));
  await refresh();
}

async function editPermissions(account: AccountRow, refresh: () => Promise<void>): Promise<void> {
  const next = prompt(`Permissions of ${account.name}, separated by spaces (the whole set):`, account.permissions.join(' '));
  if (next === null) return;
  await call('PUT', `/admin/v1/accounts/${encodeURIComponent(account.account_id)}/permissions`, { permissions: words(next) });
  announce(`Permissions of ${account.name} set.`);
  await refresh();
}

async function setStatus(account: AccountRow, change: 'disable' | 'enable', refresh: () => Promise<void>): Promise<void> {
  if (change === 'disable' && !confirm(`Disable ${account.name}? Its live tokens are revoked and it gets no new ones until enabled.`)) return;
  await call('POST', `/admin/v1/accounts/${encodeURIComponent(account.account_id)}/${change}`, change === 'disable' ? {} : undefined);
  announce(`${account.name} ${change}d.`);
  await refresh();
}

function words(text: string): string[] {
  return text.split(/[\s,]+/).filter((word) => word !== '');
}
