// Type-only, erased from the compiled script: the page reads the rows the admin API answers.
import type { AuditRow } from '@tessera/audit';
import { call, query } from './api.js';
import { announce, button, element, field, form, input, showPage, table, time } from './dom.js';
import { hasScope, notAllowed } from './session.js';

interface AccessAt {
  readonly at: string;
  readonly families: readonly { family_id: string; generation: number; issued_at: string; expires_at: string; credential_id: string }[];
  readonly legacy_tokens: readonly { jti: string; issued_at: string; expires_at: string }[];
}

const pageSize = 50;

/** The audit trail as a timeline, filtered as GET /admin/v1/events filters it; and who held a usable token at an instant. */
export async function showAudit(): Promise<void> {
  if (!hasScope('audit:read')) {
    showPage('Audit trail', notAllowed('audit:read'));
    return;
  }
  const account = input({ name: 'account', autocomplete: 'off' });
  const family = input({ name: 'family', autocomplete: 'off' });
  const type = input({ name: 'type', autocomplete: 'off', list: 'event-types' });
  const since = input({ type: 'datetime-local', name: 'since', step: '1' });
  const until = input({ type: 'datetime-local', name: 'until', step: '1' });
  const timeline = element('div', { id: 'timeline' });
  let filters: Record<string, string | undefined> = {};
  const list = async (cursor?: string) => {
    const page = await call<{ events: readonly AuditRow[]; next_cursor: string | null }>('GET', `/admin/v1/events${query({ ...filters, limit: pageSize, cursor })}`);
    timeline.replaceChildren(
      page.events.length === 0 ? element('p', {}, 'No event matches.') : element('ol', { class: 'timeline', 'aria-label': 'Events, oldest first' }, ...page.events.map(eventItem)),
      page.next_cursor ? button('Next page of events', () => list(page.next_cursor!)) : '',
    );
    announce(`${page.events.length} events shown.`);
  };
  showPage(
    'Audit trail',
    form(
      'Filter the audit trail',
      async () => {
        filters = { account: account.value.trim(), family: family.value.trim(), type: type.value.trim(), since: isoOf(since.value), until: isoOf(until.value) };
        await list();
      },
      element('div', { class: 'fields' }, field('Account ID', account), field('Family ID', family), field('Event type', type, 'e.g. TokenIssued, TokenRevoked, AccountRegistered'), field('Since', since), field('Until', until)),
      eventTypeList(),
      element('button', { type: 'submit' }, 'Show events'),
    ),
    timeline,
    accessAtSection(),
  );
  await list();
}

function eventItem(event: AuditRow): HTMLElement {
  const facts = [
    event.account_id && `account ${event.account_id}`,
    event.family_id && `family ${event.family_id}`,
    event.generation !== null && `generation ${event.generation}`,
    event.reason && `reason ${event.reason}`,
    event.actor && `by ${event.actor}`,
    event.source_address && `from ${event.source_address}`,
  ].filter((fact): fact is string => typeof fact === 'string');
  return element('li', {}, time(event.time), ' ', element('strong', {}, event.type), ' ', element('span', { class: 'facts' }, facts.join(' · ')));
}

function accessAtSection(): HTMLElement {
  const account = input({ name: 'access-account', autocomplete: 'off', required: '' });
  const at = input({ type: 'datetime-local', name: 'access-at', step: '1', required: '' });
  const answer = element('div', { id: 'access-at-answer' });
  return element(
    'section',
    { 'aria-labelledby': 'access-at-title' },
    element('h2', { id: 'access-at-title' }, 'Who held a usable token at an instant'),
    form(
      'Access at an instant',
      async () => {
        const found = await call<AccessAt>('GET', `/admin/v1/accounts/${encodeURIComponent(account.value.trim())}/access-at${query({ at: isoOf(at.value) })}`);
        answer.replaceChildren(
          table(
            `Usable access tokens of ${account.value.trim()} at ${found.at}`,
            ['Family', 'Generation', 'Issued', 'Expires', 'Credential'],
            [
              ...found.families.map((family) => [element('code', {}, family.family_id), String(family.generation), time(family.issued_at), time(family.expires_at), family.credential_id]),
              ...found.legacy_tokens.map((token) => [element('code', {}, token.jti), 'legacy', time(token.issued_at), time(token.expires_at), '-']),
            ],
          ),
        );
      },
      element('div', { class: 'fields' }, field('Account ID', account), field('At (your local time)', at)),
      element('button', { type: 'submit' }, 'Show access'),
    ),
    answer,
  );
}

/** Suggestions for the type filter: the events an operator asks about most. */
function eventTypeList(): HTMLElement {
  const types = ['TokenIssued', 'TokenRotated', 'TokenRevoked', 'AccountRegistered', 'AccountDisabled', 'AccountEnabled', 'AccountTokensRevoked', 'PermissionsChanged', 'ApiCredentialIssued', 'ApiCredentialRevoked', 'AdminTokenIssued', 'AdminTokenRevoked'];
  return element('datalist', { id: 'event-types' }, ...types.map((value) => element('option', { value })));
}

/** A datetime-local value (the user's zone) as ISO 8601 with a zone, as the API takes it; undefined for none. */
function isoOf(local: string): string | undefined {
  return local === '' ? undefined : new Date(local).toISOString();
}
