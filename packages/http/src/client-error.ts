import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Problem } from '@tessera/contracts';
import { problemTypes } from './problem.js';

/**
 * fastify's `clientErrorHandler`: what Node's HTTP parser refuses before fastify sees a request
 * (an unknown method, a control character in a header, headers too large, a request too slow)
 * is answered in problem+json like every other error. There is no request or reply object
 * here: the answer is a raw HTTP/1.1 response written on the socket, which is then closed.
 * Nothing of the refused bytes is echoed or logged: they may hold an Authorization header.
 */
export function answerClientError(this: FastifyInstance | undefined, error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  this?.log.debug({ err: { code: error.code } }, 'refused before routing: not valid HTTP');
  // As Node itself does: write only when no response of an earlier request is half-sent, so
  // the peer never reads a corrupted stream.
  if (socket.writable && !responseInFlight(socket)) socket.write(rawResponse(problemFor(error)));
  socket.destroy();
}

function problemFor(error: Error & { code?: string; rawPacket?: unknown }): Problem {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { type: problemTypes.requestTimeout, title: 'Request Timeout', status: 408, detail: 'the request did not arrive in time' };
    case 'HPE_HEADER_OVERFLOW':
      return { type: problemTypes.headersTooLarge, title: 'Request Header Fields Too Large', status: 431, detail: 'the request headers are too large' };
    case 'HPE_INVALID_METHOD':
      // RFC 9110 9.1: a well-formed method the server does not recognise SHOULD get 501.
      if (hasTokenMethod(error.rawPacket)) {
        return { type: problemTypes.notImplemented, title: 'Not Implemented', status: 501, detail: 'the request method is not one this server implements' };
      }
      return badRequest('the request line is not valid HTTP/1.1');
    case 'HPE_INVALID_HEADER_TOKEN':
      return badRequest('a request header name is not valid');
    case 'HPE_INVALID_CHARACTER':
    case 'HPE_INVALID_HEADER_VALUE':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return badRequest('a request header holds a character HTTP does not allow');
    default:
      return badRequest('the request is not valid HTTP/1.1');
  }
}

const badRequest = (detail: string): Problem => ({ type: problemTypes.badRequest, title: 'Bad Request', status: 400, detail });

/** The method of the refused request line, when it is an RFC 9110 token: only then is it a method at all. */
function hasTokenMethod(rawPacket: unknown): boolean {
  if (!Buffer.isBuffer(rawPacket)) return false;
  const line = rawPacket.subarray(0, 64).toString('latin1');
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ /.test(line);
}

function rawResponse(problem: Problem): string {
  const body = JSON.stringify(problem);
  return [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? problem.title}`,
    'content-type: application/problem+json',
    `content-length: ${Buffer.byteLength(body)}`,
    'cache-control: no-store',
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

/** Node keeps the response being written on the socket (`_httpMessage`, internal, read the way Node's own handler reads it). */
function responseInFlight(socket: Socket): boolean {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  return inFlight?.headersSent === true;
}
