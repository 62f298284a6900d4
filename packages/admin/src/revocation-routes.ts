import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Problem } from '@tessera/contracts';
import { } from '@tessera/http';
import type { AdminGuard } from './admin-auth.js';
import { FamiliesCatchingUp } from './families-catching-up.js';
import type { AdminAudit, OperatorRevocation } from './operator-revocation.js';

const id = z.string().min(1).max(128);
const errors = { 400: Problem, 401: Problem, 403: Problem, 404: Problem, 503: Problem };

export interface RevocationRoutesOptions {
  readonly guard: AdminGuard;
  readonly revocation: OperatorRevocation;
  /** False when the families read model has not caught up (in time): revoke-tokens answers 503 rather than miss a family. */
  readonly familiesReady?: () => Promise<boolean>;
}

/**
 * Operator revocation on the admin listener, scope tokens:revoke. An unknown family or account is a
 * 404 and a store outage a 503, both from the error handler's table.
 */
export async function revocationRoutes(app: FastifyInstance, options: RevocationRoutesOptions): Promise<void> {
  const { guard, revocation } = options;
  // These routes take no body: an operator's `curl -X POST`, with or without one, of any type, is fine.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined));
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const onRequest = guard.requireScope('tokens:revoke');

  routes.post(
    '/admin/v1/families/:family_id/revoke',
    {
      onRequest,
      schema: {
        summary: 'Revoke a token family: its access tokens and its refresh token are refused from now on (scope tokens:revoke)',
        tags: ['admin'],
        security: [{ bearer: [] }],
        params: z.object({ family_id: id }),
        response: { 200: z.object({ family_id: z.string(), account_id: z.string(), revoked: z.literal(true), already_revoked: z.boolean() }), ...errors },
      },
    },
    async (request, reply) => {
      const revoked = await revocation.revokeFamily(request.params.family_id, auditOf(request));
      return noStore(reply).send({ family_id: revoked.familyId, account_id: revoked.accountId, revoked: true as const, already_revoked: revoked.alreadyRevoked });
    },
  );

  routes.post(
    '/admin/v1/accounts/:account_id/revoke-tokens',
    {
      onRequest,
      schema: {
        summary: "Revoke every token of an account, v5 and v1: its live families and every access token issued up to now (scope tokens:revoke)",
        tags: ['admin'],
        security: [{ bearer: [] }],
        params: z.object({ account_id: id }),
        // 409: this region is not the control region, which alone writes accounts (the detail names it).
        response: { 200: z.object({ revoked_families: z.number().int().nonnegative() }), ...errors, 409: Problem },
      },
    },
    async (request, reply) => {
      if (options.familiesReady && !(await options.familiesReady())) throw new FamiliesCatchingUp();
      const { revokedFamilies } = await revocation.revokeAccountTokens(request.params.account_id, auditOf(request));
      return noStore(reply).send({ revoked_families: revokedFamilies });
    },
  );
}

/** The guard ran first (onRequest), so the admin token is known here. */
function auditOf(request: FastifyRequest): AdminAudit {
  return { adminTokenId: request.adminToken!.id, requestId: String(request.id), sourceAddress: request.ip };
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store');
}
