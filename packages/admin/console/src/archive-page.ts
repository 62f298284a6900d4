import { ApiRefusal, call } from './api.js';
import { element, showPage, table, time } from './dom.js';
import { hasScope, notAllowed } from './session.js';

interface ArchiveStatus {
  readonly segments: number;
  readonly archived_events: number;
  readonly archive_bytes: number;
  readonly oldest_archived: string | null;
  readonly newest_archived: string | null;
  readonly manifest_entries: number;
  readonly deleted_segments: number;
  readonly manifest_head_sha256: string | null;
}
interface ArchivePins {
  readonly keys: readonly { fingerprint: string; public_key_pem: string | null }[];
  readonly manifest_entries: number;
  readonly manifest_head_sha256: string | null;
}
interface SigningKey {
  readonly kid: string;
  readonly published_at: string;
  readonly current: boolean;
  readonly retained_until: string | null;
  readonly in_jwks: boolean;
}

/** The archive's status and its pins (what tessera archive verify --pin checks a copy against), and the signing keys' rotation dates. */
export async function showArchive(): Promise<void> {
  if (!hasScope('audit:read')) {
    showPage('Archive and keys', notAllowed('audit:read'));
    return;
  }
  const [status, pins, signing] = await Promise.all([
    optional(call<ArchiveStatus>('GET', '/admin/v1/archive/status')),
    optional(call<ArchivePins>('GET', '/admin/v1/archive/keys')),
    call<{ keys: readonly SigningKey[] }>('GET', '/admin/v1/signing-keys'),
  ]);
  showPage(
    'Archive and keys',
    element('h2', {}, 'Signing keys'),
    table(
      'Token signing keys',
      ['Key ID', 'Published', 'Signs new tokens', 'Retained until', 'In the JWKS'],
      signing.keys.map((key) => [element('code', {}, key.kid), time(key.published_at), key.current ? 'yes' : 'no', time(key.retained_until), key.in_jwks ? 'yes' : 'no']),
    ),
    element('p', { class: 'hint' }, 'Rotate with tessera keys rotate; a retired key stays in the JWKS until every token it signed has expired.'),
    element('h2', {}, 'Archive'),
    status === undefined
      ? element('p', {}, 'This process keeps no audit index, so it serves no archive status.')
      : element(
          'dl',
          { class: 'facts-list' },
          ...fact('Segments', `${status.segments} (${status.deleted_segments} deleted past the audit retention)`),
          ...fact('Archived events', String(status.archived_events)),
          ...fact('Bytes', String(status.archive_bytes)),
          ...fact('Events from', time(status.oldest_archived)),
          ...fact('Events to', time(status.newest_archived)),
          ...fact('Manifest entries', String(status.manifest_entries)),
          ...fact('Manifest head SHA-256', element('code', {}, status.manifest_head_sha256 ?? '-')),
        ),
    element('h3', {}, 'Pins'),
    pins === undefined
      ? element('p', {}, 'The pins are not available yet.')
      : element(
          'div',
          {},
          element('p', {}, `The event log records ${pins.keys.length} archive keys and the head entry ${pins.manifest_entries} (SHA-256 ${pins.manifest_head_sha256 ?? '-'}).`),
          element('ul', {}, ...pins.keys.map((key) => element('li', {}, element('code', {}, key.fingerprint), key.public_key_pem === null ? ' (its public key file is missing from the archive)' : ''))),
        ),
    element('p', { class: 'hint' }, 'Verification reads every segment: run tessera archive verify --pin FILE, with this page\'s pins saved from GET /admin/v1/archive/keys.'),
  );
}

function fact(label: string, value: Node | string): HTMLElement[] {
  return [element('dt', {}, label), element('dd', {}, value)];
}

/** A route this process does not serve (no audit index: 404) or not yet (503) is shown as absent, not as a failure. */
async function optional<T>(answer: Promise<T>): Promise<T | undefined> {
  try {
    return await answer;
  } catch (error) {
    if (error instanceof ApiRefusal && (error.status === 404 || error.status === 503)) return undefined;
    throw error;
  }
}
