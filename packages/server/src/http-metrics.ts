import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Metrics } from '@tessera/host';
import { isVerification } from './access-log.js';
import type { ResponseStep, RouteOptions } from './request-steps.js';

const tokenOperations: Record<string, string> = {
  '/v5/Authorization/get-oauth-token': 'issue',
  '/v5/Authorization/refresh-oauth-token': 'refresh',
  '/v5/Authorization/revoke-oauth-token': 'revoke',
  '/v1/authenticate': 'legacy_issue',
  '/oauth2/token': 'oauth_token',
  '/oauth2/introspect': 'introspect',
  '/oauth2/revoke': 'oauth_revoke',
};

/** Counts outcomes from the answers, so no route has to remember to: a response step of the server's. */
export function countOutcomes(metrics: Metrics): ResponseStep {
  return (_request, reply, route) => countOutcome(reply, route, metrics);
}

function countOutcome(reply: FastifyReply, route: RouteOptions, metrics: Metrics): void {
  // By route pattern, never by path: the label's values stay as few as the routes.
  const url = route.url ?? 'unmatched';
  const status = reply.statusCode;
  metrics.httpResponses.tally(url, statusClasses[Math.floor(status / 100)] ?? `${Math.floor(status / 100)}xx`).inc();
  const operation = tokenOperations[url];
  if (operation) {
    const outcome = status === 200 ? 'ok' : status === 401 ? 'refused' : status === 429 ? 'throttled' : status < 500 ? 'invalid_request' : 'error';
    metrics.tokens.tally(operation, outcome).inc();
    return;
  }
  if (isVerification(route)) {
    const outcome = status === 401 ? 'unauthorized' : status === 403 ? 'forbidden' : status < 400 ? 'allowed' : 'error';
    metrics.verifications.tally(outcome).inc();
  }
}

/** The label values of the status classes, made once rather than per answer. */
const statusClasses = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];

/** Prometheus text, on the admin listener only: the public port must not tell the world how it is doing. */
export function serveMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
