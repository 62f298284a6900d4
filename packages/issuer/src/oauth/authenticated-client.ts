import type { FastifyRequest } from 'fastify';
import type { AuthenticatedClient, TokenService } from '../token-service.js';
import { checkClientAssertion } from './client-assertion.js';
import { presentedClient, type ClientSecretParameters } from './client-authentication.js';
import type { UsedAssertionIds } from './used-assertion-ids.js';

export interface ClientAuthenticationDeps {
  readonly tokens: Pick<TokenService, 'authenticate' | 'authenticateByAssertion'>;
  /** The metadata's `issuer`; the token endpoint is under it. */
  readonly issuer: () => string;
  /** Epoch seconds. */
  readonly now: () => number;
  /** TESSERA_CLOCK_SKEW. */
  readonly clockSkewSeconds: number;
  /** The jtis of assertions already accepted by this process, shared by the three endpoints. */
  readonly usedAssertionIds: UsedAssertionIds;
}

/**
 * The client of an OAuth 2.0 request, authenticated by the one method it presents: a secret
 * checked against its keyed hash, or a private_key_jwt assertion checked with the account's keys.
 * An assertion is good at every endpoint: its `aud` is the issuer or the token endpoint (RFC 7523
 * section 3 lets the server name what identifies it), and its jti is spent wherever it is used first.
 */
export async function authenticatedClient(request: FastifyRequest, body: ClientSecretParameters, deps: ClientAuthenticationDeps): Promise<AuthenticatedClient> {
  const presented = presentedClient(request, body);
  if (presented.method !== 'private_key_jwt') return deps.tokens.authenticate(presented.clientId, presented.clientSecret);
  const issuer = deps.issuer();
  const check = { audiences: [issuer, `${issuer}/oauth2/token`], now: deps.now(), clockSkewSeconds: deps.clockSkewSeconds, usedIds: deps.usedAssertionIds };
  return deps.tokens.authenticateByAssertion(presented.clientId, (keys) => checkClientAssertion(presented.assertion, presented.clientId, keys, check));
}
