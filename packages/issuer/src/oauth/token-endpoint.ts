import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { OAuthTokenRequest, OAuthTokenResponse } from '@tessera/contracts';
import { familyOfRefreshToken } from '@tessera/tokens';
import type { OAuthForwarding } from '../forwarding.js';
import { noStore, requestMetadata } from '../http-request.js';
import { forwardedClientOf } from '../peer-link.js';
import type { IssuedPair, TokenService } from '../token-service.js';
import { authenticatedClient, type ClientAuthenticationDeps } from './authenticated-client.js';
import { answeredElsewhere } from './oauth-forwarding.js';
import { OAuthRequestRefused, oauthErrorResponses } from './oauth-errors.js';
import { scopeOf } from './scope.js';
import { dpopKeyOf, type TokenEndpointDpop } from './token-endpoint-dpop.js';

/** The grants the token endpoint takes, as its request schema lists them. */
export const grantTypes = OAuthTokenRequest.shape.grant_type.options;

export interface OAuthEndpointOptions extends ClientAuthenticationDeps {
  readonly tokens: TokenService;
  /** The metadata's `issuer` (TESSERA_PUBLIC_URL, or the default built from the bound port): the `iss` of these tokens. */
  readonly issuer: () => string;
  /** DPoP (RFC 9449) at the token endpoint: the proofs' replay cache and, when required, nonces. */
  readonly dpop: TokenEndpointDpop;
  /** With regions: a refresh of a family homed elsewhere is sent to its home issuer (docs/oauth.md, Regions). */
  readonly forwarding?: OAuthForwarding | undefined;
}

const tokenAnswer = (pair: IssuedPair, now: number): OAuthTokenResponse => ({
  access_token: pair.accessToken,
  // RFC 9449 section 5: a bound access token is of the DPoP type.
  token_type: pair.jkt === undefined ? 'Bearer' : 'DPoP',
  expires_in: Math.max(1, pair.expiresAt - now),
  refresh_token: pair.refreshToken,
  scope: pair.scope.join(' '),
});

/**
 * RFC 6749's token endpoint over the same families as get-oauth-token: client_credentials makes
 * a family (the same TokenIssued, the same refresh token life), refresh_token rotates one with the
 * spec's single-use and reuse rules. The client authenticates first, for either grant (section 6:
 * a confidential client's refresh is bound to it).
 */
export async function tokenEndpoint(app: FastifyInstance, options: OAuthEndpointOptions): Promise<void> {
  const { tokens } = options;
  app.withTypeProvider<ZodTypeProvider>().post(
    '/oauth2/token',
    {
      schema: {
        summary: 'OAuth 2.0 token endpoint (RFC 6749): client_credentials and refresh_token',
        description:
          'Client authentication: `client_secret_basic`, `client_secret_post` or `private_key_jwt`. A `DPoP` header (RFC 9449) with a proof for `POST` and this endpoint binds the tokens to the proof\'s key: `token_type` is `DPoP` and the access token carries `cnf.jkt`; a bound family\'s refresh token is taken only here, with a proof by the same key. With TESSERA_DPOP_NONCE=required every answer carries a `DPoP-Nonce` header, and a proof without that nonce is a 400 `use_dpop_nonce`.',
        tags: ['oauth2'],
        consumes: ['application/x-www-form-urlencoded'],
        body: OAuthTokenRequest,
        response: { 200: OAuthTokenResponse, ...oauthErrorResponses(400, 401, 413, 415, 429, 503) },
      },
    },
    async (request, reply) => {
      const { body } = request;
      // A refresh another region forwarded: that region authenticated the client and checked the proof.
      const forwarded = forwardedClientOf(request);
      if (forwarded !== undefined) {
        if (body.grant_type !== 'refresh_token' || body.refresh_token === undefined) throw new OAuthRequestRefused('ERR_OAUTH_REQUEST_INVALID', 'a peer forwards only the refresh_token grant');
        const metadata = { ...requestMetadata(request), actor: 'oauth2:refresh_token' };
        const grant = { issuer: forwarded.issuer, scope: scopeOf(body.scope), resource: body.resource, dpopJkt: forwarded.dpopJkt, clientId: forwarded.clientId };
        return noStore(reply).send(tokenAnswer(await tokens.refreshToken(body.refresh_token, metadata, grant), options.now()));
      }
      const issuer = options.issuer();
      const client = await authenticatedClient(request, body, options);
      // The proof is checked against this region's token endpoint, the URL the client addressed, even when home answers.
      const dpopJkt = dpopKeyOf(request, reply, `${issuer}/oauth2/token`, options.dpop);
      // RFC 9449 section 5.2: a client registered with dpop_bound_access_tokens gets no bearer token.
      if (dpopJkt === undefined && client.dpopBoundAccessTokens) throw new OAuthRequestRefused('ERR_DPOP_PROOF_INVALID', 'this client must send a DPoP proof (its tokens are DPoP-bound)');
      const scope = scopeOf(body.scope);
      // The audit row names the door and the grant; the client is its api_login_id.
      const metadata = { ...requestMetadata(request), actor: `oauth2:${body.grant_type}` };
      const grant = { issuer, scope, resource: body.resource, dpopJkt };
      if (body.grant_type === 'client_credentials') {
        return noStore(reply).send(tokenAnswer(await tokens.issueFamily(client, metadata, grant), options.now()));
      }
      if (body.refresh_token === undefined || body.refresh_token === '') throw new OAuthRequestRefused('ERR_OAUTH_REQUEST_INVALID', 'refresh_token is required for the refresh_token grant');
      const familyId = familyOfRefreshToken(body.refresh_token);
      if (familyId !== undefined) {
        // Only the validated fields cross the link; the client's credentials and proof do not.
        const form = { grant_type: 'refresh_token', refresh_token: body.refresh_token, ...(body.scope === undefined ? {} : { scope: body.scope }), ...(body.resource === undefined ? {} : { resource: body.resource }) };
        const forward = { familyId, refreshToken: body.refresh_token, form, client: { clientId: client.apiLoginId, accountId: client.accountId, dpopJkt, issuer } };
        if (await answeredElsewhere(options.forwarding, forward, request, reply)) return reply;
      }
      return noStore(reply).send(tokenAnswer(await tokens.refreshToken(body.refresh_token, metadata, { ...grant, clientId: client.apiLoginId }), options.now()));
    },
  );
}
