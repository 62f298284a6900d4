import type { FastifyReply } from 'fastify';
import type { Problem } from '@tessera/contracts';

/** RFC 9457 problem details. `type` URIs are stable: clients may switch on them. */
export const problemTypes = {
  badRequest: 'urn:tessera:problem:bad-request',
  invalidCredentials: 'urn:tessera:problem:invalid-credentials',
  invalidToken: 'urn:tessera:problem:invalid-token',
  forbidden: 'urn:tessera:problem:forbidden',
  notFound: 'urn:tessera:problem:not-found',
  methodNotAllowed: 'urn:tessera:problem:method-not-allowed',
  payloadTooLarge: 'urn:tessera:problem:payload-too-large',
  requestTimeout: 'urn:tessera:problem:request-timeout',
  headersTooLarge: 'urn:tessera:problem:headers-too-large',
  uriTooLong: 'urn:tessera:problem:uri-too-long',
  notImplemented: 'urn:tessera:problem:not-implemented',
  unsupportedMediaType: 'urn:tessera:problem:unsupported-media-type',
  tooManyRequests: 'urn:tessera:problem:too-many-requests',
  unavailable: 'urn:tessera:problem:unavailable',
  internal: 'urn:tessera:problem:internal',
  notControlRegion: 'urn:tessera:problem:not-control-region',
  conflict: 'urn:tessera:problem:conflict',
} as const;

/** Sends a problem document. A challenge, when one is due, is the caller's: see bearer-challenge.ts. */
export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).header('content-type', 'application/problem+json').header('cache-control', 'no-store').send(problem);
}

export const unauthorized = (detail: string, type: string = problemTypes.invalidToken): Problem => ({
  type,
  title: 'Unauthorized',
  status: 401,
  detail,
});

export const forbidden = (detail: string): Problem => ({ type: problemTypes.forbidden, title: 'Forbidden', status: 403, detail });
