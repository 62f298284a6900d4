import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problemTypes, sendProblem } from '@tessera/http';
import type { AccessAtAnswer, EventPage } from './audit-index.js';
import { InvalidQuery, encodeCursor, eventQueryLimit, parseEventQuery, parseInstant, type EventQuery, type RawParameters } from './event-query.js';

/** What the routes read: the audit index, and whether it can answer yet. */
export interface AuditReadModel {
  /** Why it cannot answer now (still catching up, failed), or undefined when it can. */
  unavailable(): string | undefined;
  events(query: EventQuery): EventPage;
  /** undefined for an account the index has never seen. */
  accessAt(accountId: string, at: number): AccessAtAnswer | undefined;
}

/** An onRequest hook that lets a request through only with an admin token holding the scope, else 401/403: before the query is validated, so a caller without a token learns nothing. */
export type AdminPreHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface AuditRoutesOptions {
  readonly audit: AuditReadModel;
  /** The admin-token check (admin tokens are another package's): `requireScope('audit:read')` guards every route here. */
  readonly requireScope: (scope: 'audit:read') => AdminPreHandler;
  /** Epoch milliseconds; `at` after it is refused. */
  readonly now?: () => number;
}

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

/**
 * The audit half of the admin API (issue 12, points 2 and 3), for the admin listener:
 * `GET /admin/v1/events` and `GET /admin/v1/accounts/{account_id}/access-at`, both `audit:read`.
 * Every answer says which log position it reflects, in the body and in X-Tessera-Log-Position.
 */
export function auditRoutes(options: AuditRoutesOptions): (app: FastifyInstance) => Promise<void> {
  const { audit } = options;
  const now = options.now ?? Date.now;
  return async (app) => {
    const routes = app.withTypeProvider<ZodTypeProvider>();

    routes.get('/admin/v1/events', {
      onRequest: options.requireScope('audit:read'),
      schema: {
        summary: 'The audit trail: events of the log, filtered, in log order',
        description:
          'Query: account, family, api_login_id, api_id, type (repeatable), since and until (ISO 8601 with a zone, or a date), ' +
          `limit (1–${eventQueryLimit.max}, default ${eventQueryLimit.default}), cursor (from next_cursor). ` +
          'With Accept: application/x-ndjson the same rows, one JSON object per line, and the next cursor in X-Tessera-Next-Cursor.',
        tags: ['admin'],
        security: [{ bearer: [] }],
        response: { 200: AuditEventsResponse },
      },
      handler: async (request, reply) => {
        const query = parsed(reply, () => parseEventQuery(request.query as RawParameters));
        if (query === undefined || !answerable(reply, audit)) return reply;
        const page = audit.events(query);
        const nextCursor = page.more === undefined ? null : encodeCursor(page.more);
        withPosition(reply, page.logPosition);
        if (wantsNdjson(request.headers.accept)) {
          if (nextCursor !== null) reply.header('x-tessera-next-cursor', nextCursor);
          const lines = Readable.from(page.rows.map((row) => `${JSON.stringify(row)}\n`));
          // The typed reply knows only the JSON answer's schema; a stream is sent as it is, unserialized.
          return reply.type('application/x-ndjson; charset=utf-8').send(lines as unknown as z.infer<typeof AuditEventsResponse>);
        }
        return reply.send({ events: [...page.rows], next_cursor: nextCursor, log_position: page.logPosition?.toString() ?? null });
      },
    });

    routes.get('/admin/v1/accounts/:account_id/access-at', {
      onRequest: options.requireScope('audit:read'),
      schema: {
        summary: 'Who held a usable access token for the account at an instant',
        description:
          'Query: at (ISO 8601 with a zone). Every family whose current access token was unexpired, unrevoked and not replaced at that ' +
          'instant, and every such v1 token, found by replaying the account\'s events up to it (to the second, as the tokens\' iat and exp).',
        tags: ['admin'],
        security: [{ bearer: [] }],
        response: { 200: AccessAtResponse },
      },
      handler: async (request, reply) => {
        const { account_id: accountId } = request.params as { account_id: string };
        const at = parsed(reply, () => parseAccessAtQuery(accountId, request.query as RawParameters, now()));
        if (at === undefined || !answerable(reply, audit)) return reply;
        const answer = audit.accessAt(accountId, Math.floor(at / 1000));
        if (answer === undefined) {
          return sendProblem(reply, { type: problemTypes.notFound, title: 'Not Found', status: 404, detail: `no account ${accountId} in the audit index` });
        }
        withPosition(reply, answer.logPosition);
        return reply.send(accessAtBody(at, answer));
      },
    });
  };
}

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

/** Runs a parse; an InvalidQuery becomes a 400 naming the parameter, and undefined. */
function parsed<T>(reply: FastifyReply, parse: () => T): T | undefined {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof InvalidQuery)) throw error;
    void sendProblem(reply, {
      type: problemTypes.badRequest,
      title: 'Bad Request',
      status: 400,
      detail: `query parameter ${error.parameter}: ${error.reason}`,
      errors: [{ field: error.parameter, message: error.reason }],
    });
    return undefined;
  }
}

/** Until the index has caught up with the log once, its answers would be silently partial: 503 instead. */
function answerable(reply: FastifyReply, audit: AuditReadModel): boolean {
  const cause = audit.unavailable();
  if (cause === undefined) {
    reply.header('cache-control', 'no-store');
    return true;
  }
  void sendProblem(reply.header('retry-after', '1'), { type: problemTypes.unavailable, title: 'Service Unavailable', status: 503, detail: cause });
  return false;
}

function withPosition(reply: FastifyReply, position: bigint | undefined): void {
  if (position !== undefined) reply.header('x-tessera-log-position', position.toString());
}

function wantsNdjson(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*application\/x-ndjson\s*(;|,|$)/i.test(accept);
}
