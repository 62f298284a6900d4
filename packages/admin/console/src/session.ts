import { ApiRefusal, call, useCsrfToken } from './api.js';
import { announce, button, element, field, form, input, showPage } from './dom.js';

/** The signed-in session, as GET /console/session answers it: never the admin token. */
export interface Session {
  readonly admin_token_id: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly expires_at: string;
  readonly csrf_token: string;
}

let current: Session | undefined;

export function session(): Session | undefined {
  return current;
}

export function hasScope(scope: string): boolean {
  return current?.scopes.includes(scope) ?? false;
}

/** What a page shows in place of what its admin token may not do. */
export function notAllowed(scope: string): HTMLElement {
  return element('p', { class: 'not-allowed' }, `Not allowed: this admin token lacks the scope ${scope}.`);
}

/**
 * The session the cookie carries, if any (the page may be reloaded while signed in); else why
 * not, when there was a session to end (its admin token revoked, say), for the sign-in page to say.
 */
export async function resume(): Promise<{ readonly session?: Session; readonly ended?: string }> {
  try {
    adopt(await call<Session>('GET', '/console/session'));
    return { session: current! };
  } catch (error) {
    adopt(undefined);
    // 'not signed in': no cookie at all, nothing ended.
    return error instanceof ApiRefusal && error.message !== 'not signed in' ? { ended: error.message } : {};
  }
}

function adopt(next: Session | undefined): void {
  current = next;
  useCsrfToken(next?.csrf_token);
  const nav = document.getElementById('sections');
  if (nav) nav.hidden = next === undefined;
  const who = document.getElementById('who');
  if (!who) return;
  if (next === undefined) {
    who.replaceChildren();
    return;
  }
  who.replaceChildren(
    element('span', {}, `Signed in as ${next.name} (${next.admin_token_id}), until ${new Date(next.expires_at).toLocaleString()} `),
    button('Sign out', signOut, { id: 'sign-out' }),
  );
}

/** The sign-in page: the admin token is sent once, in the body, and the field is emptied straight away. */
export function showSignIn(reason?: string, then: () => void = () => undefined): void {
  adopt(undefined);
  const token = input({ type: 'password', name: 'admin_token', autocomplete: 'off', required: '', spellcheck: 'false' });
  showPage(
    'Sign in',
    reason ? element('p', { class: 'notice', role: 'alert' }, reason) : null,
    form(
      'Sign in',
      async () => {
        const presented = token.value;
        token.value = '';
        adopt(await call<Session>('POST', '/console/session', { admin_token: presented }));
        announce('Signed in.');
        then();
      },
      field('Admin token', token, 'A token from tessera admin-tokens create. It is exchanged for a session cookie and is not kept by this page.'),
      element('button', { type: 'submit' }, 'Sign in'),
    ),
  );
  token.focus();
}

async function signOut(): Promise<void> {
  await call<undefined>('DELETE', '/console/session');
  announce('Signed out.');
  location.hash = '';
  showSignIn();
}
