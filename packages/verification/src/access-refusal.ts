import type { FastifyReply } from 'fastify';
import { bearerChallenge, dpopChallenge, forbidden, sendProblem, unauthorized } from '@tessera/http';
import { dpopSigningAlgorithms } from '@tessera/tokens';
import type { AccessDecision } from './bearer-verifier.js';

/** What a request with no credentials is told: both schemes are taken (RFC 9449 section 7.2's example, one header). */
const noCredentials = `${bearerChallenge({})}, ${dpopChallenge({}, dpopSigningAlgorithms)}`;
const bearerInvalid = bearerChallenge({ error: 'invalid_token' });

/**
 * Answers a refused decision as problem+json with its challenge. A bearer token gets RFC 6750's,
 * as it always has: `invalid_token` for a token that failed, `insufficient_scope` with the
 * permission a valid token lacked. A request with the DPoP scheme gets RFC 9449 section 7.1's
 * `DPoP` challenge, with `invalid_dpop_proof` for its proof and the algorithms taken. A request
 * with no credentials is told both schemes; a DPoP-bound token presented as a bearer token is
 * told `invalid_token` and that DPoP is the way.
 */
export function sendAccessRefusal(reply: FastifyReply, decision: Exclude<AccessDecision, { status: 200 }>): FastifyReply {
  return sendProblem(reply.header('www-authenticate', challengeFor(decision)), decision.status === 403 ? forbidden(decision.detail) : unauthorized(decision.detail));
}

/** The `WWW-Authenticate` value for a refused decision (one header; several challenges comma-separated, as RFC 9110 section 11.6.1 allows). */
export function challengeFor(decision: Exclude<AccessDecision, { status: 200 }>): string {
  if (decision.scheme === 'DPoP') {
    if (decision.status === 403) return dpopChallenge({ error: 'insufficient_scope', scope: decision.scope }, dpopSigningAlgorithms);
    const error = decision.code === 'ERR_DPOP_PROOF_INVALID' ? 'invalid_dpop_proof' : 'invalid_token';
    return dpopChallenge({ error, description: decision.detail }, dpopSigningAlgorithms);
  }
  if (decision.status === 403) return bearerChallenge({ error: 'insufficient_scope', scope: decision.scope });
  if (decision.code === 'ERR_TOKEN_MISSING') return noCredentials;
  if (decision.code === 'ERR_TOKEN_DPOP_BOUND') return `${bearerInvalid}, ${dpopChallenge({}, dpopSigningAlgorithms)}`;
  return bearerInvalid;
}
