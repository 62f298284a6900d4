import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { IntrospectionResponse, OAuthTokenTypeHintRequest } from '@tessera/contracts';
import { noStore } from '../http-request.js';
import { authenticatedClient, type ClientAuthenticationDeps } from './authenticated-client.js';
import { oauthErrorResponses } from './oauth-errors.js';
import { lookUpToken, type TokenLookupDeps } from './token-introspection.js';

/** The permission that lets a client (a resource server) introspect every token, not only its own. */
export const introspectPermission = 'tessera:introspect';

/**
 * RFC 7662. The caller authenticates as a client. A client with `tessera:introspect` learns about
 * any token; any other only about its own; a token that is not the caller's to see, or not
 * active, is `{"active": false}` alone, so the answer tells nothing about other clients' tokens.
 */
export async function introspectionEndpoint(app: FastifyInstance, options: TokenLookupDeps & Omit<ClientAuthenticationDeps, 'tokens'> & { readonly tokens: ClientAuthenticationDeps['tokens'] }): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/oauth2/introspect',
    {
      schema: {
        summary: 'OAuth 2.0 token introspection (RFC 7662): whether an access or refresh token is active',
        tags: ['oauth2'],
        consumes: ['application/x-www-form-urlencoded'],
        body: OAuthTokenTypeHintRequest,
        response: { 200: IntrospectionResponse, ...oauthErrorResponses(400, 401, 413, 415, 429, 503) },
      },
    },
    async (request, reply) => {
      const caller = await authenticatedClient(request, request.body, options);
      const found = await lookUpToken(request.body.token, options);
      const mayLook = found.active && (found.client_id === caller.apiLoginId || caller.permissions.includes(introspectPermission));
      return noStore(reply).send(mayLook ? found : { active: false });
    },
  );
}
