import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkDpopProof, type SpentProofIds } from '@tessera/tokens';
import type { DpopNonces } from './dpop-nonces.js';
import { OAuthRequestRefused } from './oauth-errors.js';

export interface TokenEndpointDpop {
  /** The jtis of the proofs this process took at its token endpoint. */
  readonly spentIds: SpentProofIds;
  /** Set when TESSERA_DPOP_NONCE is `required`: every proof must carry a nonce the server gave out. */
  readonly nonces: DpopNonces | undefined;
  readonly clockSkewSeconds: number;
  /** Epoch seconds. */
  readonly now: () => number;
}

/**
 * The thumbprint of the key of the request's DPoP proof (RFC 9449 section 5), checked against the
 * token endpoint's URL as the metadata names it, which is the URL clients address; undefined when
 * the request carries no proof. Where nonces are required every answer carries the current one.
 */
export function dpopKeyOf(request: FastifyRequest, reply: FastifyReply, tokenEndpoint: string, dpop: TokenEndpointDpop): string | undefined {
  const { nonces } = dpop;
  if (nonces !== undefined) reply.header('dpop-nonce', nonces.current());
  const proof = request.headers.dpop;
  if (proof === undefined) return undefined;
  // Node joins a repeated header with ", ", which no compact JWS holds.
  if (Array.isArray(proof) || proof.includes(',')) throw new OAuthRequestRefused('ERR_DPOP_PROOF_INVALID', 'send exactly one DPoP header');
  const checked = checkDpopProof(proof, {
    method: 'POST',
    url: tokenEndpoint,
    now: dpop.now(),
    clockSkewSeconds: dpop.clockSkewSeconds,
    acceptsNonce: nonces && ((nonce) => nonces.accepts(nonce)),
    spentIds: dpop.spentIds,
  });
  if (!checked.ok) throw new OAuthRequestRefused(checked.code, checked.description);
  return checked.jkt;
}
