import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { problemTypes, sendProblem, unauthorized } from '@tessera/http';

/**
 * The issuer-to-issuer link (docs/decisions/0012): a forwarded request carries the shared
 * TESSERA_PEER_SECRET and the client's own address. Header names are lowercase, as node gives them.
 */
export const peerHeaders = {
  secret: 'tessera-peer-secret',
  forwardedFor: 'tessera-forwarded-for',
} as const;

/** Requests that proved they come from a peer issuer, with the address of the client behind them. */
const authenticatedPeers = new WeakMap<FastifyRequest, string>();

/** Hashed first so both sides have one length, then compared in constant time. */
function sameSecret(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

/**
 * On the token operations: a request that says it was forwarded (either peer header) must carry
 * the peer secret, else it is refused with 401 before anything else runs. Without a configured
 * secret no request is taken as forwarded. The secret is never logged (headers are not, and the
 * refusal names no value).
 */
export function authenticatePeerRequests(app: FastifyInstance, secret: string | undefined): void {
  app.addHook('onRequest', async (request, reply) => {
    const presented = request.headers[peerHeaders.secret];
    const forwardedFor = request.headers[peerHeaders.forwardedFor];
    if (presented === undefined && forwardedFor === undefined) return;
    if (secret === undefined || typeof presented !== 'string' || typeof forwardedFor !== 'string' || !sameSecret(presented, secret)) {
      request.log.warn('forwarded request refused: the peer link is not authenticated');
      return sendProblem(reply, unauthorized('forwarded request from an unauthenticated peer', problemTypes.invalidCredentials));
    }
    // One address, as the forwarding issuer saw it; cut short because it only names a client.
    authenticatedPeers.set(request, forwardedFor.slice(0, 64));
  });
}

/** True for a request an authenticated peer issuer forwarded here: it is never forwarded again. */
export const isForwardedByPeer = (request: FastifyRequest): boolean => authenticatedPeers.has(request);

/** The client's own address: the forwarding issuer's word for it on an authenticated link, else the socket's. */
export const clientAddress = (request: FastifyRequest): string => authenticatedPeers.get(request) ?? request.ip;
