import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EventMetadata } from '@tessera/contracts';
import { problemTypes, sendProblem, unauthorized } from '@tessera/http';
import { IssuerRefusal } from './issuer-errors.js';
import { clientAddress } from './peer-link.js';

/**
 * Every issuer refusal is a 401 (spec section 7); the code stays in the log, not the body. These
 * endpoints take their credentials in the body and are not bearer-protected, so the 401 carries no
 * Bearer challenge (RFC 6750 applies to bearer-protected resources).
 */
export function answerRefusal(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (!(error instanceof IssuerRefusal)) throw error;
  request.log.info({ refusal: error.code }, 'token request refused');
  const type = error.code === 'ERR_INVALID_CLIENT' ? problemTypes.invalidCredentials : problemTypes.invalidToken;
  return sendProblem(reply, unauthorized(error.message, type));
}

export function requestMetadata(request: FastifyRequest): EventMetadata {
  // Behind an authenticated peer link, the client's own address (docs/decisions/0012).
  return { requestId: String(request.id), sourceAddress: clientAddress(request) };
}

export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

export const isoTime = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();
