import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import type { ResponseStep, RouteOptions } from './request-steps.js';

const probes = new Set(['/healthz', '/readyz', '/metrics']);

/** Writes a request's access line; for answers sent where no onResponse hook runs (framework-errors.ts). */
export type AccessLine = (request: FastifyRequest, reply: FastifyReply, route?: RouteOptions) => void;

/**
 * One line per request, written when the answer has gone, instead of fastify's two.
 *
 * Allowed verifications (protected routes and forward-auth answering 2xx) and health probes are
 * logged at `debug`: a reverse proxy calls forward-auth once per upstream request, and at `info`
 * two JSON lines each halved the verifier's throughput (8.9k vs 16.9k req/s measured). They are
 * counted in `tessera_verifications_total`; refusals and every token operation stay at `info`.
 * See docs/decisions/0005.
 *
 * The line is written by a logger of its own on the app logger's stream, without the redaction
 * every other line goes through: its fields are fixed here and none can hold a secret (method,
 * path without the query, request id, address, status, time), so redaction found nothing to
 * censor in it, yet cost ~18 µs a line (its wildcard paths clone and re-stringify each field),
 * plus ~4 µs for the request's child logger. That was ~4 % of a durable issuance's CPU
 * in the profile. The line's bytes are the same as before: reqId, req, res, responseTime, msg.
 */
export function logEachRequestOnce(app: FastifyInstance, steps?: ResponseStep[]): AccessLine {
  // buildApp makes fastify's logger from pino options: app.log is that pino root logger.
  const appLog = app.log as unknown as Logger;
  // pino keeps its destination under a symbol its types do not declare on Logger, hence the casts.
  const destination = (appLog as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  const accessLog = pino({ level: 'trace' }, destination);
  // Into the server's response steps (one hook for them all); else a callback hook of its own: no
  // promise per request on the protected routes' path.
  if (steps) steps.push(writeAccessLine);
  else {
    app.addHook('onResponse', (request, reply, done) => {
      writeAccessLine(request, reply);
      done();
    });
  }
  return writeAccessLine;
  function writeAccessLine(request: FastifyRequest, reply: FastifyReply, route: RouteOptions = request.routeOptions): void {
    const status = reply.statusCode;
    const level = status < 400 && (isVerification(route) || probes.has(route.url ?? '')) ? 'debug' : 'info';
    // The app logger's level decides, as it did when the line went through the request's logger.
    if (!appLog.isLevelEnabled(level)) return;
    accessLog[level](
      {
        reqId: request.id,
        // Query strings can carry tokens from careless clients: the path only (logger.ts's req serializer does the same).
        req: { method: request.method, url: request.url.split('?')[0], id: request.id, remoteAddress: request.ip },
        res: { statusCode: status },
        responseTime: reply.elapsedTime,
      },
      'request completed',
    );
  }
}

/**
 * A bearer-token decision: forward-auth, or a route protected by the verification plugin (it
 * carries the plugin's `config.tessera` route option, read by name so the host does not depend
 * on the plugin).
 */
export function isVerification(route: RouteOptions): boolean {
  return (route.config as { tessera?: unknown }).tessera !== undefined || route.url === '/forward-auth';
}
