import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { SpentProofIds } from '@tessera/tokens';
import type { TokenLookupDeps } from './token-introspection.js';
import type { TokenService } from '../token-service.js';
import { metadataRoute } from './authorization-server-metadata.js';
import { introspectionEndpoint } from './introspection-endpoint.js';
import { answerOAuthError } from './oauth-errors.js';
import { revocationEndpoint } from './revocation-endpoint.js';
import { tokenEndpoint } from './token-endpoint.js';
import { UsedAssertionIds } from './used-assertion-ids.js';
import type { DpopNonces } from './dpop-nonces.js';
import type { OAuthForwarding } from '../forwarding.js';

export interface OAuthRoutesOptions extends Omit<TokenLookupDeps, 'tokens'> {
  readonly tokens: TokenService;
  /** The metadata's `issuer`: TESSERA_PUBLIC_URL, or the default built from the port the public listener bound. */
  readonly issuer: () => string;
  /** TESSERA_DPOP_NONCE=required: the token endpoint's nonces; undefined: none asked for. */
  readonly dpopNonces: DpopNonces | undefined;
  /** With regions: refreshes and revocations of families homed elsewhere go to their home issuer. */
  readonly forwarding?: OAuthForwarding | undefined;
}

/**
 * The OAuth 2.0 door (docs/oauth.md) beside the spec's interface, over the same families: the RFC
 * 8414 metadata, and the token, introspection and revocation endpoints. Form-encoded only, in their
 * own context, whose errors are RFC 6749 JSON rather than problem+json.
 */
/**
 * Every parameter's bound together, form-encoded (each character at most three bytes), fits well
 * inside: a body over it holds a parameter longer than the document allows, or far too many.
 */
const oauthBodyLimit = 64 * 1024;

export async function oauthRoutes(app: FastifyInstance, options: OAuthRoutesOptions): Promise<void> {
  await app.register(metadataRoute, { issuer: options.issuer });
  await app.register(async (endpoints) => {
    endpoints.removeAllContentTypeParsers();
    await endpoints.register(formbody, { bodyLimit: oauthBodyLimit });
    endpoints.setErrorHandler(answerOAuthError);
    // One jti cache for the three endpoints: an assertion spent at one is spent at all.
    const authentication = { tokens: options.tokens, issuer: options.issuer, now: options.now, clockSkewSeconds: options.clockSkewSeconds, usedAssertionIds: new UsedAssertionIds() };
    const dpop = { spentIds: new SpentProofIds({ clockSkewSeconds: options.clockSkewSeconds }), nonces: options.dpopNonces, clockSkewSeconds: options.clockSkewSeconds, now: options.now };
    await endpoints.register(tokenEndpoint, { ...authentication, dpop, forwarding: options.forwarding });
    await endpoints.register(introspectionEndpoint, { ...options, ...authentication });
    await endpoints.register(revocationEndpoint, { ...authentication, keys: options.keys, issuers: options.issuers, forwarding: options.forwarding });
  });
}
