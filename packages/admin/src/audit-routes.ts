import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import {
  AccessAtResponse,
  AuditEventsResponse,
  accessAtBody,
  encodeCursor,
  eventQueryLimit,
  parseAccessAtQuery,
  parseEventQuery,
  type AuditReadModel,
  type RawParameters,
} from '@tessera/audit';
import { problemTypes, sendProblem } from '@tessera/http';
import { archiveKeys, ArchiveKeysResponse } from './archive-keys.js';

/** An onRequest hook that lets a request through only with an admin token holding the scope, else 401/403: before the query is validated, so a caller without a token learns nothing. */
export type AdminPreHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface AuditRoutesOptions {
  readonly audit: AuditReadModel;
  /** The admin-token check (admin tokens are another package's): `requireScope('audit:read')` guards every route here. */
  readonly requireScope: (scope: 'audit:read') => AdminPreHandler;
  /** Epoch milliseconds, from the host's clock; `at` after it is refused. */
  readonly now: () => number;
  /** The archive folder (TESSERA_ARCHIVE_DIR): its public keys are published here. */
  readonly archiveDir?: string | undefined;
}

/**
 * The audit half of the admin API, for the admin listener:
 * `GET /admin/v1/events` and `GET /admin/v1/accounts/{account_id}/access-at`, both `audit:read`.
 * Every answer says which log position it reflects, in the body and in X-Tessera-Log-Position.
 */
export function auditRoutes(options: AuditRoutesOptions): (app: FastifyInstance) => Promise<void> {
  const { audit } = options;
  const { now } = options;
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
        // A filter that cannot be used throws InvalidQuery: a 400 naming it, from the error table.
        // Cast: no schema checks this query (parseEventQuery does, shared with the CLI); fastify hands it over as names to a value or a list.
        const query = parseEventQuery(request.query as RawParameters);
        if (!answerable(reply, audit)) return reply;
        // Over TESSERA_AUDIT_QUERY_BUDGET_MS it throws AuditQueryOverBudget: a 503 naming the budget.
        const page = await audit.events(query);
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

    const archiveDir = options.archiveDir;
    if (archiveDir !== undefined) {
      routes.get('/admin/v1/archive/keys', {
        onRequest: options.requireScope('audit:read'),
        schema: {
          summary: 'The archive\'s pins: every key Tessera made or adopted for it, and the manifest\'s head, as the event log records them',
        description:
          'Ed25519 public keys (PEM, SubjectPublicKeyInfo) by fingerprint, the SHA-256 of the key\'s DER, and the head entry\'s sequence and SHA-256, ' +
          'read from the event log (a key file dropped into the archive is not listed). An auditor keeps this answer out of band and checks a copy of the ' +
          'archive against it with tessera archive verify --pin, or with openssl and sha256sum (docs/audit.md, "The archive").',
        tags: ['admin'],
        security: [{ bearer: [] }],
        response: { 200: ArchiveKeysResponse },
      },
        handler: async (_request, reply) => {
          const pins = audit.archivePins();
          if (pins === undefined) {
            return sendProblem(reply.header('retry-after', '1'), { type: problemTypes.unavailable, title: 'Service Unavailable', status: 503, detail: 'the audit thread has not read the archive\'s anchors from the log yet; try again shortly' });
          }
          return reply.header('cache-control', 'no-store').send(archiveKeys(archiveDir, pins));
        },
      });
    }

    routes.get('/admin/v1/accounts/:account_id/access-at', {
      onRequest: options.requireScope('audit:read'),
      schema: {
        summary: 'Who held a usable access token for the account at an instant',
        description:
          'Query: at (ISO 8601 with a zone), limit (1–1000 tokens a page, default 100), cursor (from next_cursor). Every family whose ' +
          'current access token was unexpired, unrevoked and not replaced at that instant, and every such v1 token, found by replaying ' +
          'the account\'s events up to it (to the second, as the tokens\' iat and exp), a page at a time.',
        tags: ['admin'],
        security: [{ bearer: [] }],
        response: { 200: AccessAtResponse },
      },
      handler: async (request, reply) => {
        // Casts: the route's path names account_id, and parseAccessAtQuery checks it and the query (shared with the CLI).
        const { account_id: accountId } = request.params as { account_id: string };
        const { atMs, limit, after } = parseAccessAtQuery(accountId, request.query as RawParameters, now());
        if (!answerable(reply, audit)) return reply;
        const answer = await audit.accessAt(accountId, Math.floor(atMs / 1000), { limit, after });
        if (answer === undefined) {
          return sendProblem(reply, { type: problemTypes.notFound, title: 'Not Found', status: 404, detail: `no account ${accountId} in the audit index` });
        }
        withPosition(reply, answer.logPosition);
        return reply.send(accessAtBody(atMs, answer));
      },
    });
  };
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
