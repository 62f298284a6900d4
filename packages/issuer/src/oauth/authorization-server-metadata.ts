import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AuthorizationServerMetadata } from '@tessera/contracts';
import { dpopSigningAlgorithms } from '@tessera/tokens';
import { assertionSigningAlgorithms } from './client-assertion.js';
import { clientAuthenticationMethods } from './client-authentication.js';
import { grantTypes } from './token-endpoint.js';

/**
 * RFC 8414's metadata: exactly what the endpoints support. `issuer` is the public URL, and every
 * endpoint is named under it. There is no authorization endpoint (no browser flows), so no
 * response type; and no OpenID discovery document: Tessera is not an OpenID provider.
 */
export function authorizationServerMetadata(issuer: string): AuthorizationServerMetadata {
  const methods = [...clientAuthenticationMethods];
  return {
    issuer,
    token_endpoint: `${issuer}/oauth2/token`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    introspection_endpoint: `${issuer}/oauth2/introspect`,
    revocation_endpoint: `${issuer}/oauth2/revoke`,
    grant_types_supported: [...grantTypes],
    response_types_supported: [],
    token_endpoint_auth_methods_supported: methods,
    introspection_endpoint_auth_methods_supported: methods,
    revocation_endpoint_auth_methods_supported: methods,
    token_endpoint_auth_signing_alg_values_supported: [...assertionSigningAlgorithms],
    introspection_endpoint_auth_signing_alg_values_supported: [...assertionSigningAlgorithms],
    revocation_endpoint_auth_signing_alg_values_supported: [...assertionSigningAlgorithms],
    dpop_signing_alg_values_supported: [...dpopSigningAlgorithms],
  };
}

export async function metadataRoute(app: FastifyInstance, options: { readonly issuer: () => string }): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/.well-known/oauth-authorization-server',
    {
      schema: {
        summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
        tags: ['oauth2'],
        response: { 200: AuthorizationServerMetadata },
      },
    },
    async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(authorizationServerMetadata(options.issuer())),
  );
}
