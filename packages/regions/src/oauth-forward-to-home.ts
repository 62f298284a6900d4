import type { FastifyRequest } from 'fastify';
import { isForwardedByPeer, peerHeaders, refreshRefusal, type OAuthForward, type OAuthForwarding, type OAuthForwardOutcome } from '@tessera/issuer';
import type { ForwardingOptions } from './forward-to-home.js';
import { decideHomeOfFamily } from './home-region.js';
import { exchangeWithHome, homeUnavailableRetryAfterSeconds, homeVerdict, relayedHeaders } from './peer-exchange.js';

export interface OAuthForwardingOptions extends Omit<ForwardingOptions, 'revokeHere'> {
  /**
   * Revokes here a family whose home region is out of reach, from the check material (docs/decisions/0018),
   * if it is `accountId`'s; throws the refusal, or ERR_REFRESH_TOKEN_UNPROVEN (503), when it cannot.
   * Without it such a revoke answers 503.
   */
  readonly revokeHere?: (refreshToken: string, request: FastifyRequest, expected: { readonly accountId: string }) => Promise<{ revokedAt: number }>;
}

const revokeRoute = '/oauth2/revoke';

/**
 * The OAuth 2.0 door's refresh (`/oauth2/token`, refresh_token grant) and revocation (`/oauth2/revoke`)
 * of a family homed in another region: sent to the home issuer's same endpoint over the
 * authenticated peer link, form-encoded with only the validated fields, and with what this region
 * vouches for as peer headers (the client it authenticated, the DPoP key it checked, the `iss` its
 * client discovered); home's answer is relayed with the headers the client may see. Home
 * unreachable: a revoke is decided here from the check material, a refresh is `unavailable`.
 */
export function createOAuthForwarding(options: OAuthForwardingOptions): OAuthForwarding {
  const unavailable: OAuthForwardOutcome = { kind: 'unavailable', retryAfterSeconds: homeUnavailableRetryAfterSeconds };
  return async (forward: OAuthForward, request: FastifyRequest): Promise<OAuthForwardOutcome> => {
    const home = decideHomeOfFamily(forward.familyId, options.regions, isForwardedByPeer(request));
    if (home.kind === 'local') return { kind: 'home' };
    if (home.kind === 'unknown-region') {
      request.log.info({ region: home.region }, 'token names a region with no configured peer');
      throw refreshRefusal('ERR_REFRESH_TOKEN_INVALID');
    }
    const revoking = request.routeOptions.url === revokeRoute;
    const revokeHere = async (): Promise<OAuthForwardOutcome> => {
      // An access token cannot be proven current from the check material: only a refresh token is decided here.
      if (!options.revokeHere || forward.refreshToken === undefined) return unavailable;
      await options.revokeHere(forward.refreshToken, request, { accountId: forward.client.accountId });
      request.log.info({ region: home.region }, 'revoked here: the home region is out of reach');
      return { kind: 'revoked-here' };
    };
    if (options.health && !options.health.isReachable(home.region)) {
      request.log.info({ region: home.region }, 'home region marked unreachable: not forwarded');
      return revoking ? revokeHere() : unavailable;
    }
    const { client } = forward;
    const outcome = await exchangeWithHome({
      url: new URL(request.routeOptions.url ?? '', home.origin),
      secret: options.secret,
      clientAddress: request.ip,
      vouched: {
        [peerHeaders.clientId]: client.clientId,
        [peerHeaders.oauthIssuer]: client.issuer,
        ...(client.dpopJkt === undefined ? {} : { [peerHeaders.dpopJkt]: client.dpopJkt }),
      },
      contentType: 'application/x-www-form-urlencoded',
      accept: 'application/json',
      body: new URLSearchParams(forward.form).toString(),
      budgetSeconds: revoking ? (options.revokeTimeoutSeconds ?? options.timeoutSeconds) : options.timeoutSeconds,
    });
    const verdict = homeVerdict(outcome, { log: request.log, region: home.region, health: options.health, revoking });
    if (verdict.kind === 'unreachable') return revoking ? revokeHere() : unavailable;
    if (verdict.kind === 'undecided') return revokeHere();
    const { answer, body } = verdict;
    const headers: Record<string, string> = {};
    for (const name of relayedHeaders) {
      const value = answer.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    return { kind: 'relayed', status: answer.status, headers, body };
  };
}
