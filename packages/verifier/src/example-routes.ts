import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ChargeAcknowledgement } from '@tessera/contracts';
import { problemResponses } from '@tessera/http';
import type { CredentialDirectory } from '@tessera/domain';

const ChargeRequest = z.looseObject({}).describe('Any JSON object: the example route charges nothing and reads none of it');

/**
 * The charge body's validator: a JSON object is what ChargeRequest takes, and it is taken as it
 * is, because zod's parse of an open object copies it key by key (about 1% of a protected
 * request's CPU in the profile, for a body the route never reads). Anything else goes to zod,
 * whose refusal is the same 400 as on every other route.
 */
function anyJsonObject<RouteSchema>(route: Parameters<FastifySchemaCompiler<RouteSchema>>[0]): ReturnType<FastifySchemaCompiler<RouteSchema>> {
  // fastify hands a route's validator compiler one part's schema (here the body's, ChargeRequest),
  // though its type names the whole route schema.
  const zod = zodValidatorCompiler(route as unknown as Parameters<typeof zodValidatorCompiler>[0]);
  return (body) => (typeof body === 'object' && body !== null && !Array.isArray(body) ? { value: body } : zod(body));
}

/**
 * The example protected operations of docs/interface.md (a v5 charge, a v1 account read). They move no money and
 * store nothing: they exist so a client can prove its token works end to end.
 */
export async function exampleRoutes(
  app: FastifyInstance,
  options: { accounts: CredentialDirectory; v5: boolean; v1: boolean },
): Promise<void> {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  // The answers are built here from verified claims, in the schema's shape by construction:
  // re-validating them with zod on every request cost ~7% of a protected request's CPU. The
  // schemas stay for the OpenAPI document; token responses keep their runtime validation.
  const serializerCompiler = () => (answer: unknown) => JSON.stringify(answer);
  if (options.v5) routes.post(
    '/v5/Transaction/charge',
    {
      config: { tessera: { interface: 'v5', permission: 'transaction:charge' } },
      serializerCompiler,
      validatorCompiler: anyJsonObject,
      schema: {
        summary: 'Example protected v5 operation (charges nothing); needs permission transaction:charge',
        tags: ['examples'],
        security: [{ bearer: [] }, { dpop: [] }],
        // Spec 4.4 sends a JSON body; the example reads none of it, but takes nothing that is not a JSON object.
        body: ChargeRequest,
        // 503 only before the process is first ready: verification goes on from memory through an outage.
        response: { 200: ChargeAcknowledgement, ...problemResponses(400, 401, 403, 413, 415, 503) },
      },
    },
    // Not async: an answer known at once goes out in the same turn (fastify sends what a handler
    // returns), without the promise, the microtask and the then() an async handler costs.
    (request) => ({
      accepted: true as const,
      account_id: request.tesseraClaims!.sub,
      note: 'example route: nothing was charged',
    }),
  );
  if (options.v1) routes.get(
    '/v1/account',
    {
      config: { tessera: { interface: 'v1' } },
      serializerCompiler,
      schema: {
        summary: 'Example protected v1 resource: the calling account',
        tags: ['examples'],
        security: [{ bearer: [] }, { dpop: [] }],
        response: { 200: z.object({ account_id: z.string(), name: z.string() }), ...problemResponses(401, 503) },
      },
    },
    (request) => {
      const accountId = request.tesseraClaims!.sub;
      return { account_id: accountId, name: options.accounts.account(accountId)?.name ?? '' };
    },
  );
}
