import type { FastifyError } from 'fastify';
import type { Problem } from '@tessera/contracts';
import { problemTypes } from './problem.js';

/**
 * The answer to an error fastify raises while routing, before any hook or handler runs (its
 * `frameworkErrors`): a path that is not valid percent-encoding, a path parameter longer than the
 * router allows, a failing route constraint. The path is not echoed: it is the client's own, and
 * may hold what should not be reflected.
 */
export function frameworkErrorProblem(error: Pick<FastifyError, 'code' | 'statusCode'>): Problem {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return { type: problemTypes.badRequest, title: 'Bad Request', status: 400, detail: 'the request path is not valid percent-encoding' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { type: problemTypes.uriTooLong, title: 'URI Too Long', status: 414, detail: 'a segment of the request path is longer than any this server takes' };
    default:
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return { type: problemTypes.badRequest, title: 'Bad Request', status: 400, detail: 'the request was refused' };
      }
      return { type: problemTypes.internal, title: 'Internal Server Error', status: 500, detail: 'the server could not complete the request' };
  }
}
