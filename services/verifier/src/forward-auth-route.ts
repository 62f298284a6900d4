import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sendAccessRefusal, type BearerVerifier } from '@tessera/verification';

/**
 * For reverse proxies (NGINX auth_request, Envoy ext_authz, Traefik ForwardAuth): the proxy
 * forwards the client's Authorization header; 200 lets the request through with the
 * subject and scope as headers, 401/403 stop it. The requirement is in the query string.
 */
export async function forwardAuthRoute(app: FastifyInstance, options: { verifier: BearerVerifier }): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/forward-auth',
    schema: {
      summary: 'Forward-auth check for reverse proxies',
      tags: ['verification'],
      querystring: z.object({
        permission: z.string().max(128).optional().describe('A scope the token must carry'),
        interface: z.enum(['v5', 'v1']).optional().describe('Which interface the token must belong to (default v5)'),
      }),
    },
    handler: async (request, reply) => {
      const decision = await options.verifier.check(request.headers.authorization, {
        interface: request.query.interface === 'v1' ? 'v1' : 'v5',
        permission: request.query.permission || undefined,
      });
      if (decision.status !== 200) return sendAccessRefusal(reply, decision);
      const { claims } = decision;
      return reply
        .header('cache-control', 'no-store')
        .header('x-tessera-subject', claims.sub)
        .header('x-tessera-client-id', claims.client_id)
        .header('x-tessera-scope', claims.scope)
        .code(200)
        .send({ active: true, sub: claims.sub, client_id: claims.client_id, scope: claims.scope, exp: claims.exp });
    },
  });
}
