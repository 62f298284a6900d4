import { z } from 'zod';
import type { AccessAtAnswer } from './audit-index.js';
import { InvalidQuery, parseInstant, type RawParameters } from './event-query.js';

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
  };
}

/** `at` for access-at (epoch ms), shared with `tessera audit access-at`: required, with a zone, not in the future. */
export function parseAccessAtQuery(accountId: string, raw: RawParameters, nowMs: number): number {
  if (accountId.length === 0 || accountId.length > 128) throw new InvalidQuery('account_id', 'must be 1 to 128 characters');
  for (const name of Object.keys(raw)) if (name !== 'at' && raw[name] !== undefined) throw new InvalidQuery(name, 'unknown query parameter');
  const given = raw.at;
  if (given === undefined) throw new InvalidQuery('at', 'is required: the instant to ask about, ISO 8601, e.g. 2026-11-22T14:03:00Z');
  if (typeof given !== 'string') throw new InvalidQuery('at', 'given more than once; it takes one value');
  const at = parseInstant(given, 'at');
  if (at > nowMs) throw new InvalidQuery('at', 'is in the future: the log can only say who held a token up to now');
  return at;
}
