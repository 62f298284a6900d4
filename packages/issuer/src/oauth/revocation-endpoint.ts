import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorCode, OAuthTokenTypeHintRequest } from '@tessera/contracts';
import { familyOfRefreshToken, verifySignature, type PublicKeySet } from '@tessera/tokens';
import { noStore, requestMetadata } from '../http-request.js';
import type { TokenService } from '../token-service.js';
import { authenticatedClient, type ClientAuthenticationDeps } from './authenticated-client.js';
import { OAuthRequestRefused, sendOAuthError, oauthErrorResponses } from './oauth-errors.js';

export interface RevocationEndpointOptions extends Omit<ClientAuthenticationDeps, 'tokens'> {
  readonly tokens: Pick<TokenService, 'authenticate' | 'authenticateByAssertion' | 'revokeToken' | 'revokeFamily'>;
  readonly keys: PublicKeySet;
  readonly issuers: () => readonly string[];
  /** Epoch seconds. */
  readonly now: () => number;
}

/** A token that is not (or no longer) valid: RFC 7009 section 2.2 answers 200, as for one revoked now. */
const alreadyInvalid = new Set([
  'ERR_REFRESH_TOKEN_INVALID',
  'ERR_REFRESH_TOKEN_USED',
  'ERR_REFRESH_TOKEN_REUSED',
  'ERR_REFRESH_TOKEN_REVOKED',
  'ERR_REFRESH_TOKEN_EXPIRED',
  'ERR_CREDENTIAL_REVOKED',
  'ERR_FAMILY_NOT_FOUND',
]);

/**
 * RFC 7009. Revoking a refresh token or an access token revokes its family: the same TokenRevoked
 * as revoke-oauth-token, so the same Kafka and Shared Signals fan-out. The caller authenticates as
 * a client and may revoke only its own tokens (section 2.1: `unauthorized_client` otherwise). An
 * unknown, expired or already revoked token is a 200 that changes nothing (section 2.2).
 */
export async function revocationEndpoint(app: FastifyInstance, options: RevocationEndpointOptions): Promise<void> {
  const { tokens } = options;
  app.withTypeProvider<ZodTypeProvider>().post(
    '/oauth2/revoke',
    {
      schema: {
        summary: 'OAuth 2.0 token revocation (RFC 7009): revokes the token\'s family',
        tags: ['oauth2'],
        consumes: ['application/x-www-form-urlencoded'],
        body: OAuthTokenTypeHintRequest,
        response: {
          200: z.object({}).describe('Revoked, or the token was not valid: an empty object'),
          ...oauthErrorResponses(400, 401, 413, 415, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const client = await authenticatedClient(request, request.body, options);
      const { token } = request.body;
      const metadata = { ...requestMetadata(request), actor: 'oauth2:revoke' };
      try {
        if (familyOfRefreshToken(token) !== undefined) {
          await tokens.revokeToken(token, metadata, { clientId: client.apiLoginId });
        } else {
          const family = accessTokenFamily(token, options);
          if (family?.clientId !== undefined && family.clientId !== client.apiLoginId) return sendOAuthError(reply, 400, 'unauthorized_client', 'the token was issued to another client');
          if (family !== undefined) await tokens.revokeFamily(family.familyId, client.apiLoginId, metadata);
        }
      } catch (error) {
        const code = errorCode(error);
        if (code === 'ERR_REFRESH_TOKEN_OTHER_CLIENT') return sendOAuthError(reply, 400, 'unauthorized_client', 'the token was issued to another client');
        if (code === undefined || !alreadyInvalid.has(code)) throw error;
      }
      return noStore(reply).send({});
    },
  );
}

/**
 * The family of a valid access token, and the client it was issued to; undefined for one that is
 * not valid (a bad signature, another issuer's, expired: nothing to revoke). A v1 token has no
 * family: it ends with its account's or credential's cut (the admin API), so revoking it alone is
 * unsupported.
 */
function accessTokenFamily(token: string, options: RevocationEndpointOptions): { readonly familyId: string; readonly clientId: string } | undefined {
  const now = options.now();
  const signed = verifySignature(token, options.keys, now);
  if (!signed.ok || !options.issuers().includes(signed.claims.iss) || now >= signed.claims.exp) return undefined;
  if (signed.claims.fid === undefined) {
    throw new OAuthRequestRefused('ERR_OAUTH_TOKEN_TYPE_UNSUPPORTED', "a v1 token cannot be revoked alone: revoke its account's tokens (POST /admin/v1/accounts/{account_id}/revoke-tokens)");
  }
  return { familyId: signed.claims.fid, clientId: signed.claims.client_id };
}
