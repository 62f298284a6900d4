import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scopeTokenSyntax } from '@tessera/contracts';
import { problemResponses, problemTypes, sendProblem } from '@tessera/http';
import { sendAccessRefusal, type BearerVerifier } from '@tessera/verification';

const ForwardAuthQuery = z.object({
  permission: z
    .string()
    .max(128)
    // What a challenge's `scope="…"` may hold; empty is let through here to be refused below, by name.
    .regex(scopeTokenSyntax, 'must be a scope token: printable ASCII without spaces, quotes or backslashes')
    .optional()
    .describe('The permission (scope) the token must carry. Required unless authenticated=true'),
  authenticated: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: any valid token of the interface will do. Must be said explicitly; a permission, when named, is still checked'),
  interface: z.enum(['v5', 'v1']).optional().describe('Which interface the token must belong to (default v5)'),
  audience: z
    .string()
    .max(512)
    .regex(/^[\x21-\x7e]+$/, 'must be an absolute URI in visible ASCII')
    .optional()
    .describe('The audience of the protected service (an RFC 8707 resource): the token must carry it as `aud`. Absent: only the default audience (`tessera:v5`)'),
});

/**
 * For the OpenAPI document: what no single query parameter can say, that the query must name a
 * permission or say authenticated=true (server/openapi.ts turns it into one object parameter).
 */
const queryRequirement = {
  'x-query-any-of': [
    { required: ['permission'], properties: { permission: { minLength: 1 } } },
    { required: ['authenticated'], properties: { authenticated: { const: 'true' } } },
  ],
};

const ForwardAuthAnswer = z.object({
  active: z.literal(true),
  sub: z.string(),
  client_id: z.string(),
  scope: z.string(),
  exp: z.number().int(),
});

/**
 * For reverse proxies (NGINX auth_request, Envoy ext_authz, Traefik ForwardAuth): the proxy
 * forwards the client's Authorization header; 200 lets the request through with the
 * subject and scope as headers, 401/403 stop it. The requirement is in the query string.
 *
 * Fails closed: a request that names no permission is a configuration mistake (an NGINX location
 * that forgot `set $tessera_permission`), answered 400, never 200. A route that really needs
 * only authentication says so with authenticated=true.
 */
export async function forwardAuthRoute(app: FastifyInstance, options: { verifier: BearerVerifier }): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/forward-auth',
    // Every proxied request comes through here: the answers are built from verified claims in the
    // schema's shape, so they are not re-validated (the schemas are for the OpenAPI document).
    serializerCompiler: () => (answer: unknown) => JSON.stringify(answer),
    schema: {
      summary: 'Forward-auth check for reverse proxies',
      description:
        'Checks the forwarded `Authorization: Bearer` token. Name the `permission` the protected route needs, or say `authenticated=true` for a route that needs only a valid token: a request that does neither is 400.',
      tags: ['verification'],
      security: [{ bearer: [] }],
      querystring: ForwardAuthQuery,
      ...queryRequirement,
      // 413 and 415 only for a request that sends a body, which proxies do not; 503 only before the first ready.
      response: { 200: ForwardAuthAnswer, ...problemResponses(400, 401, 403, 413, 415, 503) },
    },
    handler: async (request, reply) => {
      const { permission, authenticated } = request.query;
      if (!permission && authenticated !== 'true') {
        return sendProblem(reply, {
          type: problemTypes.badRequest,
          title: 'Bad Request',
          status: 400,
          detail: 'forward-auth needs the permission to check, or authenticated=true for authentication only',
          errors: [{ field: 'permission', message: 'required: name the permission the route needs, or ask for authentication only with authenticated=true' }],
        });
      }
      const decision = await options.verifier.check(request.headers.authorization, {
        interface: request.query.interface === 'v1' ? 'v1' : 'v5',
        permission: permission || undefined,
        ...(request.query.audience === undefined ? {} : { audience: request.query.audience }),
      });
      if (decision.status !== 200) return sendAccessRefusal(reply, decision);
      const { claims } = decision;
      return reply
        .header('cache-control', 'no-store')
        .header('x-tessera-subject', claims.sub)
        .header('x-tessera-client-id', claims.client_id)
        .header('x-tessera-scope', claims.scope)
        .code(200)
        .send({ active: true as const, sub: claims.sub, client_id: claims.client_id, scope: claims.scope, exp: claims.exp });
    },
  });
}
