import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { RequestStep } from '@tessera/http';

/**
 * With TESSERA_TRUSTED_PROXIES, request.ip is the nearest entry of X-Forwarded-For that is not a
 * trusted hop (proxy-addr, through fastify's trustProxy). proxy-addr takes that entry as it is,
 * so a client that reaches a trusted hop's address range could name itself `anything<script>`
 * and have it keyed into a budget, logged and written to the audit trail. An entry that is not
 * an IP address is no client's address: the header is then dropped for this request, and the
 * client is the direct peer, the connection's own address.
 */
export function dropForgedForwardedFor(request: FastifyRequest): void {
  if (request.raw.headers['x-forwarded-for'] !== undefined && isIP(request.ip) === 0) delete request.raw.headers['x-forwarded-for'];
}

/**
 * The first of the server's request steps (run in one hook), so every later reader of request.ip
 * (throttles, logs, audit) sees only an address. It runs on every request, forward-auth's hot path
 * included.
 */
export const believeOnlyForwardedAddresses: RequestStep = (request) => {
  dropForgedForwardedFor(request);
  return true;
};
