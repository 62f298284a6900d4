import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { problemTypes, sendProblem, unauthorized } from '@tessera/http';
import type { ForwardedClient } from './forwarding.js';
import { sendOAuthError } from './oauth/oauth-errors.js';

/**
 * The receiving end of the issuer-to-issuer link (docs/decisions/0012), in every issuer: a forwarded
 * request carries the link's shared secret (the region module's `PeerLink` hands it over) and the
 * client's own address. Header names are lowercase, as node gives them.
 */
export const peerHeaders = {
  secret: 'tessera-peer-secret',
  forwardedFor: 'tessera-forwarded-for',
  /** On a forwarded OAuth 2.0 request: the client the forwarding issuer authenticated. */
  clientId: 'tessera-forwarded-client-id',
  /** On a forwarded OAuth 2.0 refresh: the thumbprint of the DPoP proof's key the forwarding issuer checked. */
  dpopJkt: 'tessera-forwarded-dpop-jkt',
  /** On a forwarded OAuth 2.0 request: the forwarding issuer's OAuth issuer, the `iss` the client discovered. */
  oauthIssuer: 'tessera-forwarded-oauth-issuer',
} as const;

/**
 * The only operations a peer forwards (the region module): a family's refresh and revoke, at the
 * spec's routes and at the OAuth 2.0 door. On any other route the peer headers mean nothing, so
 * the secret buys no exemption from a failure budget and no say over the address the audit trail
 * records.
 */
const forwardedRoutes = new Set(['/v5/Authorization/refresh-oauth-token', '/v5/Authorization/revoke-oauth-token', '/oauth2/token', '/oauth2/revoke']);

/** Requests that proved they come from a peer issuer, with the address of the client behind them. */
const authenticatedPeers = new WeakMap<FastifyRequest, string>();
/** Requests that said they were forwarded and could not prove it: refused once the throttle has looked at them. */
const refusedPeers = new WeakSet<FastifyRequest>();

/** Hashed first so both sides have one length, then compared in constant time. */
function sameSecret(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

/**
 * On a forwarded operation: a request that says it was forwarded (either peer header) must carry
 * the peer secret and name the client by an IP address. Without a configured secret no request
 * is taken as forwarded. Only recognised here, as the request arrives; a request that fails is
 * refused by refuseUnauthenticatedPeers, after the throttle, so each wrong guess of the secret
 * is charged to its address's budget and a spent budget answers 429 before the secret is looked
 * at. The secret is never logged (headers are not, and the refusal names no value).
 */
export function recognizePeerRequests(app: FastifyInstance, secret: string | undefined): void {
  app.addHook('onRequest', async (request) => {
    if (!forwardedRoutes.has(request.routeOptions.url ?? '')) return;
    const presented = request.headers[peerHeaders.secret];
    const forwardedFor = request.headers[peerHeaders.forwardedFor];
    if (presented === undefined && forwardedFor === undefined) return;
    if (secret === undefined || typeof presented !== 'string' || typeof forwardedFor !== 'string' || !sameSecret(presented, secret) || isIP(forwardedFor) === 0) {
      refusedPeers.add(request);
      return;
    }
    authenticatedPeers.set(request, forwardedFor);
  });
}

/** The refusal of a request recognizePeerRequests could not authenticate: 401, before the token service sees it. */
export function refuseUnauthenticatedPeers(app: FastifyInstance): void {
  app.addHook('preHandler', async (request, reply) => {
    if (!refusedPeers.has(request)) return;
    request.log.warn('forwarded request refused: the peer link is not authenticated');
    // The OAuth 2.0 endpoints answer in RFC 6749's shape, this refusal included.
    if (request.routeOptions.url?.startsWith('/oauth2/') === true) return sendOAuthError(reply, 401, 'invalid_client', 'forwarded request from an unauthenticated peer');
    return sendProblem(reply, unauthorized('forwarded request from an unauthenticated peer', problemTypes.invalidCredentials));
  });
}

/** True for a refresh or revoke an authenticated peer issuer forwarded here: it is never forwarded again, nor throttled here. */
export const isForwardedByPeer = (request: FastifyRequest): boolean => authenticatedPeers.has(request);

/** The client's own address: the forwarding issuer's word for it on an authenticated link, else the socket's. */
export const clientAddress = (request: FastifyRequest): string => authenticatedPeers.get(request) ?? request.ip;

/**
 * What the forwarding issuer vouches for on an OAuth 2.0 request it forwarded: the client it
 * authenticated, the DPoP key it checked, the `iss` to stamp. Undefined on any request that did not
 * prove it came from a peer, whatever headers it carries: a client cannot name itself this way.
 */
export function forwardedClientOf(request: FastifyRequest): ForwardedClient | undefined {
  if (!isForwardedByPeer(request)) return undefined;
  const single = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const clientId = single(peerHeaders.clientId);
  const issuer = single(peerHeaders.oauthIssuer);
  if (clientId === undefined || issuer === undefined) return undefined;
  return { clientId, issuer, dpopJkt: single(peerHeaders.dpopJkt) };
}
