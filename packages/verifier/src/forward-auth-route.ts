import proxyAddr from '@fastify/proxy-addr';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { validatorCompiler as zodValidatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scopeTokenSyntax } from '@tessera/contracts';
import { problemResponses, problemTypes, sendProblem } from '@tessera/http';
import { hasDpopScheme, sendAccessRefusal, type BearerVerifier, type PresentedRequest } from '@tessera/verification';

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

/**
 * Each bounded by what it can hold (a proof is at most 4 KiB, a method a short token), so that
 * together they stay well inside the 16 KiB of headers the server takes, and checked: a longer one
 * is a 400, as the document says.
 */
const forwardedHeaderBounds = {
  dpop: 4096,
  'x-forwarded-method': 32,
  'x-forwarded-proto': 16,
  'x-forwarded-host': 256,
  'x-forwarded-uri': 2048,
  'x-original-method': 32,
  'x-original-url': 2304,
} as const;
const forwardedHeader = (name: keyof typeof forwardedHeaderBounds, description: string) => z.string().max(forwardedHeaderBounds[name]).optional().describe(description);

/** The first forwarded header over its bound, as a validation error fastify answers with a 400; undefined when none is. */
function overLongHeader(headers: Record<string, string | string[] | undefined>): Error | undefined {
  for (const [name, bound] of Object.entries(forwardedHeaderBounds)) {
    const value = headers[name];
    const length = Array.isArray(value) ? value.join(', ').length : (value?.length ?? 0);
    if (length > bound) return Object.assign(new Error(`the ${name} header is longer than ${bound} characters`), { statusCode: 400 });
  }
  return undefined;
}

/**
 * The client's request as the proxy saw it, which a DPoP proof is checked against (RFC 9449
 * section 4.3: `htm` and `htu`), and the proof itself. Traefik's names, or the X-Original-* pair
 * of NGINX's auth_request examples. Only their lengths are validated: a missing or unusable one
 * refuses a DPoP request with `invalid_dpop_proof`, and a bearer request never reads them.
 */
const ForwardAuthHeaders = z.looseObject({
  dpop: forwardedHeader('dpop', 'The client\'s DPoP proof (RFC 9449), for a token presented with `Authorization: DPoP`'),
  'x-forwarded-method': forwardedHeader('x-forwarded-method', 'The client request\'s method (Traefik ForwardAuth): what the DPoP proof\'s `htm` must be'),
  'x-forwarded-proto': forwardedHeader('x-forwarded-proto', 'The scheme the client addressed (Traefik ForwardAuth), for the DPoP proof\'s `htu`'),
  'x-forwarded-host': forwardedHeader('x-forwarded-host', 'The host (and port) the client addressed (Traefik ForwardAuth), for the DPoP proof\'s `htu`'),
  'x-forwarded-uri': forwardedHeader('x-forwarded-uri', 'The path (and query) the client addressed (Traefik ForwardAuth), for the DPoP proof\'s `htu`'),
  'x-original-method': forwardedHeader('x-original-method', 'The client request\'s method (NGINX: `$request_method`), if X-Forwarded-Method is not sent'),
  'x-original-url': forwardedHeader('x-original-url', 'The absolute URL the client addressed (NGINX: `$scheme://$http_host$request_uri`), if the X-Forwarded-Proto, -Host and -Uri trio is not sent'),
});

/** A request method: an RFC 9110 token. */
const methodSyntax = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A header that holds one value, commas and all (a URL's query may have them): the last line of a repeated one. */
function onlyOf(value: string | string[] | undefined): string | undefined {
  const last = Array.isArray(value) ? value.at(-1) : value;
  return last === undefined || last === '' ? undefined : last;
}

/** One value of a header a proxy may have appended to (`a, b`): the last, the nearest proxy's. */
function lastOf(value: string | string[] | undefined): string | undefined {
  const last = Array.isArray(value) ? value.at(-1) : value;
  if (last === undefined) return undefined;
  const comma = last.lastIndexOf(',');
  const entry = (comma === -1 ? last : last.slice(comma + 1)).trim();
  return entry === '' ? undefined : entry;
}

/**
 * The method and URL of the client's request, from the proxy's headers; undefined when they are
 * missing or unusable, or come from a peer that is not a trusted proxy while TESSERA_TRUSTED_PROXIES
 * names the proxies: a DPoP request is then refused, never checked against forward-auth's own URL.
 */
function clientRequestOf(request: FastifyRequest, trusted: ((address: string, hop: number) => boolean) | undefined): PresentedRequest | undefined {
  const { headers } = request;
  const dpop = headers.dpop;
  if (trusted !== undefined) {
    const peer = request.socket.remoteAddress;
    if (peer === undefined || !trusted(peer, 0)) return undefined;
  }
  const method = lastOf(headers['x-forwarded-method']) ?? lastOf(headers['x-original-method']);
  if (method === undefined || !methodSyntax.test(method)) return undefined;
  const proto = lastOf(headers['x-forwarded-proto']);
  const host = lastOf(headers['x-forwarded-host']);
  const uri = onlyOf(headers['x-forwarded-uri']);
  const url = proto !== undefined && host !== undefined && uri !== undefined && uri.startsWith('/') ? `${proto}://${host}${uri}` : onlyOf(headers['x-original-url']);
  if (url === undefined || !URL.canParse(url)) return undefined;
  return { method, url, dpop };
}

const ForwardAuthAnswer = z.object({
  active: z.literal(true),
  sub: z.string(),
  client_id: z.string(),
  scope: z.string(),
  exp: z.number().int(),
});

/**
 * For reverse proxies (NGINX auth_request, Envoy ext_authz, Traefik ForwardAuth): the proxy
 * forwards the client's Authorization header (and, for a DPoP-bound token, its DPoP proof with
 * the method and URL the client called); 200 lets the request through with the subject and scope
 * as headers, 401/403 stop it. The requirement is in the query string.
 *
 * Fails closed: a request that names no permission is a configuration mistake (an NGINX location
 * that forgot `set $tessera_permission`), answered 400, never 200. A route that really needs
 * only authentication says so with authenticated=true.
 */
export async function forwardAuthRoute(
  app: FastifyInstance,
  options: {
    verifier: BearerVerifier;
    /** TESSERA_TRUSTED_PROXIES: when set, the client's method and URL are believed only from these peers. */
    trustedProxies?: readonly string[] | undefined;
  },
): Promise<void> {
  const trusted = options.trustedProxies === undefined ? undefined : proxyAddr.compile([...options.trustedProxies]);
  app.withTypeProvider<ZodTypeProvider>().route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/forward-auth',
    // Every proxied request comes through here: the answers are built from verified claims in the
    // schema's shape, so they are not re-validated (the schemas are for the OpenAPI document).
    serializerCompiler: () => (answer: unknown) => JSON.stringify(answer),
    // The headers are taken as they are, not copied by zod on every request: only their lengths are checked (see ForwardAuthHeaders).
    // fastify hands the compiler one part's schema (here the query's), though its type names the whole route schema.
    validatorCompiler: (route) =>
      route.httpPart === 'headers'
        ? (headers: unknown) => {
            // Node gives the headers as an object of strings and string arrays.
            const error = overLongHeader(headers as Record<string, string | string[] | undefined>);
            return error === undefined ? { value: headers } : { error };
          }
        : zodValidatorCompiler(route as unknown as Parameters<typeof zodValidatorCompiler>[0]),
    schema: {
      summary: 'Forward-auth check for reverse proxies',
      description:
        'Checks the forwarded `Authorization: Bearer` token, or an `Authorization: DPoP` token with its `DPoP` proof (RFC 9449) for the method and URL the client called, which the proxy passes as `X-Forwarded-Method`, `-Proto`, `-Host` and `-Uri`, or as `X-Original-Method` and `X-Original-URL`. Name the `permission` the protected route needs, or say `authenticated=true` for a route that needs only a valid token: a request that does neither is 400.',
      tags: ['verification'],
      security: [{ bearer: [] }, { dpop: [] }],
      querystring: ForwardAuthQuery,
      headers: ForwardAuthHeaders,
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
      const { authorization } = request.headers;
      // Read only for a DPoP request: a bearer request costs what it always has.
      const presented = request.headers.dpop !== undefined || (authorization !== undefined && hasDpopScheme(authorization)) ? clientRequestOf(request, trusted) : undefined;
      const decision = await options.verifier.check(
        authorization,
        {
          interface: request.query.interface === 'v1' ? 'v1' : 'v5',
          permission: permission || undefined,
          ...(request.query.audience === undefined ? {} : { audience: request.query.audience }),
        },
        presented,
      );
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
