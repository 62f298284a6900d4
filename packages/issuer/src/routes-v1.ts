import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { LegacyAuthenticateRequest, LegacyAuthenticateResponse } from '@tessera/contracts';
import { problemResponses } from '@tessera/http';
import type { InterfaceTokenOperations } from './token-service.js';
import { noStore, requestMetadata } from './http-request.js';

/**
 * Spec 4.5: the older interface, form-encoded only. Registered in its own encapsulated
 * context so JSON is refused here with a 415 while v5 keeps JSON.
 */
export async function v1AuthenticateRoutes(app: FastifyInstance, options: { tokens: InterfaceTokenOperations }): Promise<void> {
  app.removeAllContentTypeParsers();
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.post(
    '/v1/authenticate',
    {
      schema: {
        summary: 'Older interface: exchange an API ID and API Key for an authentication token',
        tags: ['v1'],
        consumes: ['application/x-www-form-urlencoded'],
        body: LegacyAuthenticateRequest,
        response: { 200: LegacyAuthenticateResponse, ...problemResponses(400, 401, 413, 415, 429, 503) },
      },
    },
    async (request, reply) => {
      const token = await options.tokens.legacyAuthenticate(request.body.apiid, request.body.apikey, requestMetadata(request));
      return noStore(reply).send({
        result: { authentication_token: token.authenticationToken, expires_in_seconds: token.expiresInSeconds },
      });
    },
  );
}
