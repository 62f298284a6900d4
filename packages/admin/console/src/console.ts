import { whenSignedOut } from './api.js';
import { showAccounts } from './accounts-page.js';
import { showArchive } from './archive-page.js';
import { showAudit } from './audit-page.js';
import { announce } from './dom.js';
import { showFamilies } from './families-page.js';
import { resume, session, showSignIn } from './session.js';
import { showSignals } from './signals-page.js';

/**
 * The admin console's pages, one per location hash (#accounts, #families/<account>, #audit,
 * #signals, #archive): the back button and a bookmark work, and nothing leaves the page.
 */
async function route(): Promise<void> {
  if (!session()) {
    showSignIn(undefined, () => void route());
    return;
  }
  const [page, argument] = location.hash.replace(/^#/, '').split('/');
  highlight(page ?? '');
  // What the last page announced does not belong to the next one.
  announce('');
  try {
    if (page === 'families' && argument) await showFamilies(decodeURIComponent(argument));
    else if (page === 'audit') await showAudit();
    else if (page === 'signals') await showSignals();
    else if (page === 'archive') await showArchive();
    else await showAccounts();
  } catch (error) {
    announce(error instanceof Error ? error.message : String(error), 'error');
  }
}

/** The current section's link says so to assistive technology (aria-current), not by colour alone. */
function highlight(page: string): void {
  const section = page === 'families' ? 'accounts' : page || 'accounts';
  for (const link of document.querySelectorAll<HTMLAnchorElement>('#sections a')) {
    if (link.hash === `#${section}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

whenSignedOut((reason) => showSignIn(`Signed out: ${reason}`, () => void route()));
window.addEventListener('hashchange', () => void route());
void resume().then(({ ended }) => (ended === undefined ? route() : showSignIn(`Signed out: ${ended}`, () => void route())));
