/**
 * What the archive keeps of an event: the audit trail's row (docs/audit.md, "Rows"), what the
 * filters match on, and what access-at replays. Never a payload, so never a keyed hash: an expired
 * refresh token's hash can never be checked again, and the trail does not need it.
 */
export interface ArchivedEvent {
  readonly position: bigint;
  /** The stream it was on, and its revision there: the event is named in the log's own terms. */
  readonly stream: string;
  readonly revision: bigint;
  readonly type: string;
  /** Epoch milliseconds: the audit index's time (never earlier than the row before it). */
  readonly time: number;
  readonly accountId: string | undefined;
  readonly familyId: string | undefined;
  readonly generation: number | undefined;
  readonly reason: string | undefined;
  readonly requestId: string | undefined;
  readonly sourceAddress: string | undefined;
  readonly actor: string | undefined;
  readonly apiLoginId: string | undefined;
  readonly apiId: string | undefined;
  /** For access-at, when the event issued or revoked tokens. */
  readonly access: ArchivedAccess | undefined;
}

/** What access-at needs of an archived event (the kinds a closed stream can hold: no cut, cuts live on account streams). */
export type ArchivedAccess =
  | { readonly kind: 'generation-issued'; readonly familyId: string; readonly generation: number; readonly credentialId: string; readonly issuedAt: number; readonly expiresAt: number }
  | { readonly kind: 'family-revoked'; readonly familyId: string; readonly revokedAt: number }
  | { readonly kind: 'legacy-token-issued'; readonly jti: string; readonly credentialId: string; readonly issuedAt: number; readonly expiresAt: number };

/**
 * Ids are kept as 16 bytes where they have Tessera's own form, since bytes compress and compare
 * better than their text: UUIDs (accounts, credentials, request ids) and base64url of 16 random
 * bytes (families, jtis). Any other form (an id a test or an older release made) goes into the
 * column's text twin, so nothing is lost or altered.
 */
export type IdForm = 'uuid' | 'base64url16';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const base64url16Pattern = /^[A-Za-z0-9_-]{21}[AQgw]$/;

/** The id as a UUID-shaped string of its 16 bytes, or undefined when it is not in `form`. */
export function idAsUuid(id: string | undefined, form: IdForm): string | undefined {
  if (id === undefined) return undefined;
  if (form === 'uuid') return uuidPattern.test(id) ? id : undefined;
  if (!base64url16Pattern.test(id)) return undefined;
  const bytes = Buffer.from(id, 'base64url');
  // Only the canonical spelling maps back to the same text.
  if (bytes.length !== 16 || bytes.toString('base64url') !== id) return undefined;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The id's text again, from its UUID-shaped bytes. */
export function idFromUuid(uuid: string, form: IdForm): string {
  return form === 'uuid' ? uuid : Buffer.from(uuid.replaceAll('-', ''), 'hex').toString('base64url');
}

/**
 * Streams are named by kind and the id they are about, which the row already holds: the archive
 * keeps the kind, and the name is made again from it (tokenfamily-<family>, legacytokens-<account>, …).
 */
export function streamKindOf(stream: string): string {
  const dash = stream.indexOf('-');
  return dash === -1 ? stream : stream.slice(0, dash);
}

/** The stream's name from its kind and the row's ids, or undefined when the row cannot say (it is then kept whole). */
export function streamFromKind(kind: string, event: Pick<ArchivedEvent, 'familyId' | 'accountId'>): string | undefined {
  if (kind === 'tokenfamily' || kind === 'revocations') return event.familyId === undefined ? undefined : `${kind}-${event.familyId}`;
  if (kind === 'legacytokens') return event.accountId === undefined ? undefined : `${kind}-${event.accountId}`;
  if (kind === 'authfailures') return `${kind}-${event.accountId ?? 'unknown'}`;
  return undefined;
}
