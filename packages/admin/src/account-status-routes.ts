import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Problem } from '@tessera/contracts';
import { problemResponses } from '@tessera/http';
import type { AdminGuard } from './admin-auth.js';
import { FamiliesCatchingUp } from './families-catching-up.js';
import { bodyOptional, pathId } from './account-routes.js';
import { accountStatusAnswer, type AccountStatus, type StatusChangeAuthor } from './account-status.js';

// Refusals are answered problem+json (the error handler), so the document names that type, and the 400's `errors`;
// 414: a path segment longer than the router takes, refused before any route.
const errors = problemResponses(400, 401, 403, 404, 414, 503);
// 409: this region is not the control region, which alone writes accounts (the detail names it).
const conflict = { 409: Problem };
const params = z.strictObject({ account_id: pathId });
const answer = z.object({
  account_id: z.string(),
  status: z.enum(['disabled', 'enabled']),
  changed: z.boolean().describe('False when the account already had this status: nothing was recorded'),
  revoked_families: z.number().int().nonnegative().describe("The live token families this call revoked (disable only; 0 on enable)"),
  tokens_revoked_before: z.string().optional().describe('Disable: access tokens of the account issued before this instant are refused for good'),
});

export interface AccountStatusRoutesOptions {
  readonly guard: AdminGuard;
  readonly status: AccountStatus;
  /** False when the families read model has not caught up (in time): disable answers 503 rather than miss a family. */
  readonly familiesReady?: (() => Promise<boolean>) | undefined;
}

/**
 * Disabling and enabling an account on the admin listener, scope accounts:write: what `tessera
 * accounts disable` and `enable` do, over HTTP. An unknown account is a 404, a store outage a 503
 * and another region's account writes a 409, all from the error handler's table.
 */
export async function accountStatusRoutes(app: FastifyInstance, options: AccountStatusRoutesOptions): Promise<void> {
  const { guard, status } = options;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const onRequest = guard.requireScope('accounts:write');

  routes.post(
    '/admin/v1/accounts/:account_id/disable',
    {
      onRequest,
      schema: {
        summary:
          "Disable an account: its live access tokens and token families are revoked, and it gets no new token until enabled; disabling a disabled account records nothing (scope accounts:write)",
        tags: ['admin'],
        security: [{ bearer: [] }],
        params,
        // No body, or a JSON object with at most a reason: an operator's `curl -X POST` needs nothing more.
        body: z.strictObject({ reason: z.string().min(1).max(200).optional().describe('Why, for the audit trail') }).nullish(),
        ...bodyOptional,
        response: { 200: answer, ...errors, ...conflict },
      },
    },
    async (request, reply) => {
      if (options.familiesReady && !(await options.familiesReady())) throw new FamiliesCatchingUp();
      const changed = await status.disable(request.params.account_id, { reason: request.body?.reason }, authorOf(request));
      return noStore(reply).send(accountStatusAnswer(changed));
    },
  );

  routes.post(
    '/admin/v1/accounts/:account_id/enable',
    {
      onRequest,
      schema: {
        summary:
          'Enable a disabled account: it gets new tokens again; tokens and families revoked by the disable stay revoked; enabling an enabled account records nothing (scope accounts:write)',
        tags: ['admin'],
        security: [{ bearer: [] }],
        params,
        response: { 200: answer, ...errors, ...conflict },
      },
    },
    async (request, reply) => {
      const changed = await status.enable(request.params.account_id, authorOf(request));
      return noStore(reply).send(accountStatusAnswer(changed));
    },
  );
}

/** The guard ran first (onRequest), so the admin token is known here. */
function authorOf(request: FastifyRequest): StatusChangeAuthor {
  return { actor: `admin:${request.adminToken!.id}`, requestId: String(request.id), sourceAddress: request.ip };
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store');
}
