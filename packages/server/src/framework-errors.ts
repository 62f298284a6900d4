import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { frameworkErrorProblem, sendProblem } from '@tessera/http';
import type { AccessLine } from './access-log.js';
import { dropForgedForwardedFor } from './forwarded-client.js';
import { securityHeaders } from './security-headers.js';

/**
 * fastify's `frameworkErrors`: what its router refuses (bad percent-encoding, an over-long path
 * parameter) is answered before any hook runs, so without this it went out as fastify's own JSON,
 * with neither the security headers nor an access line. Here it gets what the hooks give every
 * other answer: the headers, problem+json, and its line in the access log (written at once, as no
 * onResponse hook runs for it either).
 */
export function answerFrameworkError(accessLine: () => AccessLine | undefined) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    // The first hook's work too: the access line's address must be one.
    dropForgedForwardedFor(request);
    reply.headers(securityHeaders);
    sendProblem(reply, frameworkErrorProblem(error));
    accessLine()?.(request, reply);
  };
}
