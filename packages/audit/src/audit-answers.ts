import { z } from 'zod';
import type { AccessAtCursor } from './access-grants.js';
import type { AccessAtAnswer } from './index-access-at.js';
import { InvalidQuery, eventQueryLimit, parseInstant, type RawParameters } from './event-query.js';

/**
 * The audit answers' shapes, shared by the admin API (served and documented in the OpenAPI
 * document) and `tessera audit --json`, so both print the same rows.
 */
export const AuditEventRow = z.object({
  position: z.string().describe('Global log position (decimal: EventStoreDB positions are 64-bit)'),
  type: z.string(),
  time: z.iso.datetime().describe('When the log recorded the event (UTC); never earlier than the row before'),
  account_id: z.string().nullable(),
  family_id: z.string().nullable(),
  generation: z.number().int().nullable(),
  reason: z.string().nullable(),
  request_id: z.string().nullable(),
  source_address: z.string().nullable(),
  actor: z.string().nullable().describe('Who, when not a client request: cli, an issuer, admin:<admin token id>'),
});
const logPosition = z.string().nullable().describe('The log position the audit index reflected when it answered (also X-Tessera-Log-Position)');
export const AuditEventsResponse = z.object({
  events: z.array(AuditEventRow),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null when no more rows match now'),
  log_position: logPosition,
});
export const AccessAtResponse = z.object({
  at: z.iso.datetime(),
  families: z.array(
    z.object({ family_id: z.string(), generation: z.number().int(), issued_at: z.iso.datetime(), expires_at: z.iso.datetime(), credential_id: z.string() }),
  ),
  legacy_tokens: z.array(z.object({ jti: z.string(), issued_at: z.iso.datetime(), expires_at: z.iso.datetime(), credential_id: z.string() })),
  log_position: logPosition,
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page of the account\'s tokens at that instant; null when there is none'),
});

/** The access-at answer as the API and `tessera audit access-at --json` print it. */
export function accessAtBody(atMs: number, answer: AccessAtAnswer): z.infer<typeof AccessAtResponse> {
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
  return {
    at: new Date(atMs).toISOString(),
    families: answer.families.map((family) => ({
      family_id: family.familyId,
      generation: family.generation,
      issued_at: iso(family.issuedAt),
      expires_at: iso(family.expiresAt),
      credential_id: family.credentialId,
    })),
    legacy_tokens: answer.legacyTokens.map((token) => ({ jti: token.jti, issued_at: iso(token.issuedAt), expires_at: iso(token.expiresAt), credential_id: token.credentialId })),
    log_position: answer.logPosition?.toString() ?? null,
    next_cursor: answer.more === undefined ? null : encodeAccessAtCursor(answer.more),
  };
}

/** What access-at was asked: the instant (epoch ms) and the page. */
export interface AccessAtRequest {
  readonly atMs: number;
  readonly limit: number;
  readonly after: AccessAtCursor | undefined;
}

/**
 * access-at's parameters, shared with `tessera audit access-at`: `at` (required, with a zone, not
 * in the future), `limit` (1–1000, default 100) and `cursor` (from next_cursor), as the events
 * query pages.
 */
export function parseAccessAtQuery(accountId: string, raw: RawParameters, nowMs: number): AccessAtRequest {
  if (accountId.length === 0 || accountId.length > 128) throw new InvalidQuery('account_id', 'must be 1 to 128 characters');
  for (const name of Object.keys(raw)) if (!['at', 'limit', 'cursor'].includes(name) && raw[name] !== undefined) throw new InvalidQuery(name, 'unknown query parameter');
  const single = (name: 'at' | 'limit' | 'cursor'): string | undefined => {
    const given = raw[name];
    if (given === undefined || typeof given === 'string') return given;
    throw new InvalidQuery(name, 'given more than once; it takes one value');
  };
  const given = single('at');
  if (given === undefined) throw new InvalidQuery('at', 'is required: the instant to ask about, ISO 8601, e.g. 2026-11-22T14:03:00Z');
  const atMs = parseInstant(given, 'at');
  if (atMs > nowMs) throw new InvalidQuery('at', 'is in the future: the log can only say who held a token up to now');
  const limitText = single('limit');
  const limit = limitText === undefined ? eventQueryLimit.default : /^\d{1,7}$/.test(limitText) ? Number(limitText) : Number.NaN;
  if (!(limit >= 1 && limit <= eventQueryLimit.max)) throw new InvalidQuery('limit', `must be a whole number from 1 to ${eventQueryLimit.max}`);
  const cursor = single('cursor');
  return { atMs, limit, after: cursor === undefined ? undefined : decodeAccessAtCursor(cursor) };
}

/** Opaque to clients, versioned like the events query's: where the next page of grants starts. */
export function encodeAccessAtCursor(cursor: AccessAtCursor): string {
  return Buffer.from(`g1:${cursor.lastExpiresAt}:${cursor.grantId}`).toString('base64url');
}

/** A cursor this server gave out, or a 400: the expiry must be a whole number within JavaScript's exact range. */
export function decodeAccessAtCursor(cursor: string): AccessAtCursor {
  const text = /^[A-Za-z0-9_-]{1,400}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const match = /^g1:(0|[1-9]\d{0,15}):(.{1,200})$/s.exec(text);
  const lastExpiresAt = match ? Number(match[1]) : Number.NaN;
  if (!match || !Number.isSafeInteger(lastExpiresAt) || encodeAccessAtCursor({ lastExpiresAt, grantId: match[2]! }) !== cursor) {
    throw new InvalidQuery('cursor', 'is not a cursor this server gave out');
  }
  return { lastExpiresAt, grantId: match[2]! };
}
