import type { FastifyReply } from 'fastify';
import { bearerChallenge, forbidden, sendProblem, unauthorized } from '@tessera/http';
import type { AccessDecision } from './bearer-verifier.js';

/**
 * Answers a refused decision as problem+json with its RFC 6750 challenge: a bare `Bearer` when
 * the request carried no bearer credentials, `invalid_token` for a token that failed,
 * `insufficient_scope` with the permission a valid token lacked.
 */
export function sendAccessRefusal(reply: FastifyReply, decision: Exclude<AccessDecision, { status: 200 }>): FastifyReply {
  if (decision.status === 403) {
    return sendProblem(reply.header('www-authenticate', bearerChallenge({ error: 'insufficient_scope', scope: decision.scope })), forbidden(decision.detail));
  }
  const challenge = decision.code === 'ERR_TOKEN_MISSING' ? bearerChallenge({}) : bearerChallenge({ error: 'invalid_token' });
  return sendProblem(reply.header('www-authenticate', challenge), unauthorized(decision.detail));
}
