import type { FastifyReply, FastifyRequest } from 'fastify';
import { problemTypes, sendProblem } from '@tessera/http';
import { isForwardedByPeer, isoTime, noStore, refreshRefusal, type Forwarding } from '@tessera/issuer';
import { decideHome, type RegionMap } from './home-region.js';
import type { PeerHealth } from './peer-health.js';
import { exchangeWithHome, homeUnavailableRetryAfterSeconds, homeVerdict, relayedHeaders } from './peer-exchange.js';

export interface ForwardingOptions {
  readonly regions: RegionMap;
  /** TESSERA_PEER_SECRET; forwarding is configured only with it (the config insists). */
  readonly secret: string;
  /** Seconds a forwarded refresh waits for the home issuer's whole answer (TESSERA_PEER_TIMEOUT). */
  readonly timeoutSeconds: number;
  /** Seconds a forwarded revoke waits before it is decided here instead (TESSERA_PEER_REVOKE_TIMEOUT). */
  readonly revokeTimeoutSeconds?: number;
  /** The failure detector: a region it marks unreachable is not waited on. */
  readonly health?: PeerHealth;
  /**
   * Revokes here a family whose home region is out of reach, from the check material (docs/decisions/0018);
   * throws the refusal (401) or ERR_REFRESH_TOKEN_UNPROVEN (503) when it cannot. Without it such a revoke answers 503.
   */
  readonly revokeHere?: (refreshToken: string, request: FastifyRequest) => Promise<{ revokedAt: number }>;
}

const revokeRoute = '/v5/Authorization/revoke-oauth-token';

/**
 * Refresh and revoke of a family homed in another region: sent to the home issuer's same route
 * over the authenticated peer link, and its answer (status, body, the headers above) relayed as
 * it is, so the client sees the interface of docs/interface.md. Answers undefined when the family is homed here.
 *
 * When the home region is out of reach (the failure detector marks it so, or this forward fails
 * within its budget, or home answers 5xx), a revoke is decided here from the check material
 * (`revokeHere`), and a refresh answers 503 with Retry-After: rotation happens only at home.
 */
export function createForwarding(options: ForwardingOptions): Forwarding {
  const homeUnavailable = (reply: FastifyReply): true => {
    sendProblem(reply.header('retry-after', String(homeUnavailableRetryAfterSeconds)), {
      type: problemTypes.unavailable,
      title: 'Service Unavailable',
      status: 503,
      detail: 'the region that holds this refresh token cannot be reached now; try again shortly, or get a new pair with get-oauth-token',
    });
    return true;
  };

  return async (refreshToken, request, reply) => {
    const home = decideHome(refreshToken, options.regions, isForwardedByPeer(request));
    if (home.kind === 'local') return false;
    if (home.kind === 'unknown-region') {
      request.log.info({ region: home.region }, 'refresh token names a region with no configured peer');
      throw refreshRefusal('ERR_REFRESH_TOKEN_INVALID');
    }
    const revoking = request.routeOptions.url === revokeRoute;
    const revokeHere = async (): Promise<true> => {
      if (!options.revokeHere) return homeUnavailable(reply);
      const { revokedAt } = await options.revokeHere(refreshToken, request);
      request.log.info({ region: home.region }, 'revoked here: the home region is out of reach');
      noStore(reply).send({ revoked: true as const, timestamp: isoTime(revokedAt) });
      return true;
    };
    if (options.health && !options.health.isReachable(home.region)) {
      request.log.info({ region: home.region }, 'home region marked unreachable: not forwarded');
      return revoking ? revokeHere() : homeUnavailable(reply);
    }
    const budget = revoking ? (options.revokeTimeoutSeconds ?? options.timeoutSeconds) : options.timeoutSeconds;
    const outcome = await exchangeWithHome({
      url: new URL(request.routeOptions.url ?? '', home.origin),
      secret: options.secret,
      clientAddress: request.ip,
      contentType: 'application/json',
      accept: 'application/json, application/problem+json',
      // Only the validated field: nothing else the client sent crosses the link.
      body: JSON.stringify({ refresh_token: refreshToken }),
      budgetSeconds: budget,
    });
    const verdict = homeVerdict(outcome, { log: request.log, region: home.region, health: options.health, revoking });
    if (verdict.kind === 'unreachable') return revoking ? revokeHere() : homeUnavailable(reply);
    if (verdict.kind === 'undecided') return revokeHere();
    const { answer, body } = verdict;
    for (const name of relayedHeaders) {
      const value = answer.headers.get(name);
      if (value !== null) reply.header(name, value);
    }
    // A string is sent as it is: the home issuer already serialized it under the same schema.
    reply.code(answer.status).send(body);
    return true;
  };
}
