import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorCode, OAuthTokenTypeHintRequest } from '@tessera/contracts';
import { familyOfRefreshToken, verifySignature, type PublicKeySet } from '@tessera/tokens';
import type { OAuthForwarding } from '../forwarding.js';
import { noStore, requestMetadata } from '../http-request.js';
import { forwardedClientOf } from '../peer-link.js';
import type { AuthenticatedClient, TokenService } from '../token-service.js';
import { authenticatedClient, type ClientAuthenticationDeps } from './authenticated-client.js';
import { answeredElsewhere } from './oauth-forwarding.js';
import { OAuthRequestRefused, sendOAuthError, oauthErrorResponses } from './oauth-errors.js';

export interface RevocationEndpointOptions extends Omit<ClientAuthenticationDeps, 'tokens'> {
  readonly tokens: Pick<TokenService, 'authenticate' | 'authenticateByAssertion' | 'revokeToken' | 'revokeFamily'>;
  readonly keys: PublicKeySet;
  readonly issuers: () => readonly string[];
  /** Epoch seconds. */
  readonly now: () => number;
  /** The `iss` of this door's tokens, which a forwarding peer names for its own. */
  readonly issuer: () => string;
  /** With regions: a revocation of a family homed elsewhere is sent to its home issuer (docs/oauth.md, Regions). */
  readonly forwarding?: OAuthForwarding | undefined;
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
  /**
   * A family homed in another region is revoked there (its home alone can check the token and the
   * client it was issued to): offered to the region module with the family the token names. An
   * access token's family is read from its signature alone, whatever its `iss`: it may be a token
   * of another region's door, which home accepts on a forwarded request.
   */
  const revokedElsewhere = async (caller: AuthenticatedClient, body: OAuthTokenTypeHintRequest, request: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    const { token, token_type_hint: hint } = body;
    const refreshFamily = familyOfRefreshToken(token);
    const familyId = refreshFamily ?? signedFamilyId(token, options);
    if (familyId === undefined) return false;
    const form = { token, ...(hint === undefined ? {} : { token_type_hint: hint }) };
    const forward = { familyId, refreshToken: refreshFamily === undefined ? undefined : token, form, client: { clientId: caller.apiLoginId, accountId: caller.accountId, issuer: options.issuer() } };
    return answeredElsewhere(options.forwarding, forward, request, reply);
  };
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
      // A revocation another region forwarded: that region authenticated the client, and its tokens carry its issuer.
      const forwarded = forwardedClientOf(request);
      const caller: { readonly clientId: string; readonly authenticated?: AuthenticatedClient } =
        forwarded ?? (await authenticatedClient(request, request.body, options).then((authenticated) => ({ clientId: authenticated.apiLoginId, authenticated })));
      const client = caller.clientId;
      const { token } = request.body;
      const metadata = { ...requestMetadata(request), actor: 'oauth2:revoke' };
      try {
        // A forwarded request is answered here, whatever family it names: it is never forwarded again.
        if (caller.authenticated !== undefined && (await revokedElsewhere(caller.authenticated, request.body, request, reply))) return reply;
        const issuers = forwarded === undefined ? options.issuers() : [...options.issuers(), forwarded.issuer];
        if (familyOfRefreshToken(token) !== undefined) {
          await tokens.revokeToken(token, metadata, { clientId: client });
        } else {
          const family = accessTokenFamily(token, options, issuers);
          if (family?.clientId !== undefined && family.clientId !== client) return sendOAuthError(reply, 400, 'unauthorized_client', 'the token was issued to another client');
          if (family !== undefined) await tokens.revokeFamily(family.familyId, client, metadata);
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

/** The family an access token names, when its signature verifies and it has not expired; its issuer is home's to check. */
function signedFamilyId(token: string, options: Pick<RevocationEndpointOptions, 'keys' | 'now'>): string | undefined {
  const now = options.now();
  const signed = verifySignature(token, options.keys, now);
  return signed.ok && now < signed.claims.exp ? signed.claims.fid : undefined;
}

/**
 * The family of a valid access token, and the client it was issued to; undefined for one that is
 * not valid (a bad signature, another issuer's, expired: nothing to revoke). A v1 token has no
 * family: it ends with its account's or credential's cut (the admin API), so revoking it alone is
 * unsupported.
 */
function accessTokenFamily(token: string, options: RevocationEndpointOptions, issuers: readonly string[]): { readonly familyId: string; readonly clientId: string } | undefined {
  const now = options.now();
  const signed = verifySignature(token, options.keys, now);
  if (!signed.ok || !issuers.includes(signed.claims.iss) || now >= signed.claims.exp) return undefined;
  if (signed.claims.fid === undefined) {
    throw new OAuthRequestRefused('ERR_OAUTH_TOKEN_TYPE_UNSUPPORTED', "a v1 token cannot be revoked alone: revoke its account's tokens (POST /admin/v1/accounts/{account_id}/revoke-tokens)");
  }
  return { familyId: signed.claims.fid, clientId: signed.claims.client_id };
}
