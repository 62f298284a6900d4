import type { FastifyReply, FastifyRequest } from 'fastify';
import { problemTypes, sendProblem } from '@tessera/http';
import { traceContextHeaders } from '@tessera/tracing';
import { decideHome, type RegionMap } from './home-region.js';
import { refreshRefusal } from './issuer-errors.js';
import { isForwardedByPeer, peerHeaders } from './peer-link.js';

export interface ForwardingOptions {
  readonly regions: RegionMap;
  /** TESSERA_PEER_SECRET; forwarding is configured only with it (the config insists). */
  readonly secret: string;
  /** Seconds to wait for the home issuer's whole answer. */
  readonly timeoutSeconds: number;
}

/** The home issuer's headers that belong to the answer the client sees; the rest are hop-by-hop or the peer's own. */
const relayedHeaders = ['content-type', 'cache-control', 'pragma', 'retry-after', 'www-authenticate'];

/** A home region that does not answer is a short outage for its families, not the client's fault. */
const homeUnavailableRetryAfterSeconds = 5;

/** Answers the request when `refreshToken`'s family is homed elsewhere; undefined when it is homed here. */
export type Forwarding = (refreshToken: string, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>;

/**
 * Refresh and revoke of a family homed in another region: sent to the home issuer's same route
 * over the authenticated peer link, and its answer (status, body, the headers above) relayed as
 * it is, so the client sees the interface of docs/interface.md. Answers undefined when the family is homed here.
 */
export function createForwarding(options: ForwardingOptions): Forwarding {
  return async (refreshToken, request, reply) => {
    const home = decideHome(refreshToken, options.regions, isForwardedByPeer(request));
    if (home.kind === 'local') return undefined;
    if (home.kind === 'unknown-region') {
      request.log.info({ region: home.region }, 'refresh token names a region with no configured peer');
      throw refreshRefusal('ERR_REFRESH_TOKEN_INVALID');
    }
    let answer: Response;
    let body: string;
    try {
      answer = await fetch(new URL(request.routeOptions.url ?? '', home.origin), {
        method: 'POST',
        headers: {
          // The home issuer's spans join this request's trace.
          ...traceContextHeaders(),
          'content-type': 'application/json',
          accept: 'application/json, application/problem+json',
          [peerHeaders.secret]: options.secret,
          [peerHeaders.forwardedFor]: request.ip,
        },
        // Only the validated field: nothing else the client sent crosses the link.
        body: JSON.stringify({ refresh_token: refreshToken }),
        signal: AbortSignal.timeout(options.timeoutSeconds * 1000),
        // A redirect would carry the peer secret and the refresh token to another origin: a home
        // issuer never answers with one, so it is a failure like a refused connection (503).
        redirect: 'error',
      });
      body = await answer.text();
    } catch (error) {
      // Refused connection, TLS failure, timeout, a redirect: the cause for the operator, a 503 for the client.
      const cause = error instanceof Error ? `${error.name}: ${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}` : String(error);
      request.log.warn({ region: home.region, cause }, 'home region unreachable for a forwarded request');
      return sendProblem(reply.header('retry-after', String(homeUnavailableRetryAfterSeconds)), {
        type: problemTypes.unavailable,
        title: 'Service Unavailable',
        status: 503,
        detail: 'the region that holds this refresh token cannot be reached now; try again shortly, or get a new pair with get-oauth-token',
      });
    }
    request.log.info({ region: home.region, status: answer.status }, 'forwarded to the home region');
    for (const name of relayedHeaders) {
      const value = answer.headers.get(name);
      if (value !== null) reply.header(name, value);
    }
    // A string is sent as it is: the home issuer already serialized it under the same schema.
    return reply.code(answer.status).send(body);
  };
}
