import { call, query } from './api.js';
import { announce, button, element, showPage, table, time } from './dom.js';
import { hasScope, notAllowed } from './session.js';

interface FamilyRow {
  readonly family_id: string;
  readonly generation: number;
  readonly api_login_id: string;
  readonly issued_at: string;
  readonly access_expires_at: string;
  readonly refresh_expires_at: string;
  readonly home_region: string | null;
  readonly dpop_bound: boolean;
}

const pageSize = 50;

/** An account's live token families: revoke one, or every token of the account. */
export async function showFamilies(accountId: string): Promise<void> {
  const revoking = hasScope('tokens:revoke');
  const results = element('div', { id: 'family-results' });
  const list = async (cursor?: string) => {
    const page = await call<{ families: readonly FamilyRow[]; next_cursor: string | null }>('GET', `/admin/v1/accounts/${encodeURIComponent(accountId)}/families${query({ limit: pageSize, cursor })}`);
    results.replaceChildren(
      page.families.length === 0
        ? element('p', {}, 'No live token family.')
        : table(
            `Live token families of ${accountId}`,
            ['Family', 'Generation', 'API Login ID', 'Issued', 'Access token expires', 'Refresh token expires', 'Home region', 'DPoP', 'Actions'],
            page.families.map((family) => [
              element('code', {}, family.family_id),
              String(family.generation),
              family.api_login_id,
              time(family.issued_at),
              time(family.access_expires_at),
              time(family.refresh_expires_at),
              family.home_region ?? '-',
              family.dpop_bound ? 'bound' : '-',
              revoking ? button('Revoke', () => revokeFamily(family.family_id, () => list(cursor)), { 'aria-label': `Revoke family ${family.family_id}` }) : '-',
            ]),
          ),
      page.next_cursor ? button('Next page of families', () => list(page.next_cursor!)) : '',
    );
  };
  showPage(
    `Token families of ${accountId}`,
    element('p', {}, element('a', { href: '#accounts' }, 'Back to accounts')),
    hasScope('audit:read') ? results : notAllowed('audit:read'),
    revoking
      ? button('Revoke every token of this account', async () => {
          if (!confirm(`Revoke every token of ${accountId}: its live families and every access token issued up to now?`)) return;
          const revoked = await call<{ revoked_families: number }>('POST', `/admin/v1/accounts/${encodeURIComponent(accountId)}/revoke-tokens`);
          announce(`Revoked ${revoked.revoked_families} families of ${accountId}.`);
          if (hasScope('audit:read')) await list();
        })
      : notAllowed('tokens:revoke'),
  );
  if (hasScope('audit:read')) await list();
}

async function revokeFamily(familyId: string, refresh: () => Promise<void>): Promise<void> {
  if (!confirm(`Revoke family ${familyId}? Its access and refresh tokens are refused from now on.`)) return;
  await call('POST', `/admin/v1/families/${encodeURIComponent(familyId)}/revoke`);
  announce(`Family ${familyId} revoked.`);
  await refresh();
}
