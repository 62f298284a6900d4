import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EventStore } from '@tessera/event-store';
import { isVerification } from './access-log.js';

/**
 * Prometheus metrics for operators, one registry per process. Names are stable: dashboards
 * and alerts are written against them (docs/operations.md lists them).
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'tessera_' });
  // prom-client names three of its gauges with a counter's `_total` suffix, which promtool (and
  // Prometheus's naming rules) reject for a gauge; the heap and event-loop metrics say the same.
  for (const misnamed of ['active_handles_total', 'active_requests_total', 'active_resources_total']) registry.removeSingleMetric(`tessera_nodejs_${misnamed}`);
  const tokens = new Counter({
    name: 'tessera_tokens_total',
    help: 'Token operations by operation (issue, refresh, revoke, legacy_issue) and outcome (ok, refused, throttled, invalid_request, error)',
    labelNames: ['operation', 'outcome'] as const,
    registers: [registry],
  });
  const verifications = new Counter({
    name: 'tessera_verifications_total',
    help: 'Bearer token decisions on protected routes and forward-auth by outcome (allowed, unauthorized, forbidden)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const appendSeconds = new Histogram({
    name: 'tessera_event_store_append_seconds',
    help: 'Time from append call to durable commit',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const throttled = new Counter({
    name: 'tessera_throttled_total',
    help: 'Token operations answered 429 because a failure budget was spent, by operation and scope (credential: one credential id from one address; address: one address)',
    labelNames: ['operation', 'scope'] as const,
    registers: [registry],
  });
  const connectionsRefused = new Counter({
    name: 'tessera_connections_refused_total',
    help: 'Connections closed on arrival because a listener held its maximum, in total or from that source address',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  return { registry, tokens, verifications, appendSeconds, throttled, connectionsRefused };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Wraps a store so every append is timed; everything else passes through. */
export function instrumentEventStore(store: EventStore, metrics: Metrics): EventStore {
  return {
    append: async (stream, events, options) => {
      const stop = metrics.appendSeconds.startTimer();
      try {
        return await store.append(stream, events, options);
      } finally {
        stop();
      }
    },
    readStream: (stream, options) => store.readStream(stream, options),
    readAll: (options) => store.readAll(options),
    subscribeToAll: (options) => store.subscribeToAll(options),
    headPosition: () => store.headPosition(),
    positionBefore: (epochMs) => store.positionBefore(epochMs),
    probe: () => store.probe(),
    close: () => store.close(),
  };
}

/** A counter read at scrape time from a running total the process keeps (which only grows). */
export function registerCounter(metrics: Metrics, name: string, help: string, read: () => number): void {
  let reported = 0;
  new Counter({
    name,
    help,
    registers: [metrics.registry],
    collect() {
      const total = read();
      if (total > reported) this.inc(total - reported);
      reported = total;
    },
  });
}

/** Gauges read at scrape time from whatever the process holds. */
export function registerGauges(metrics: Metrics, gauges: Record<string, { help: string; read: () => number | Promise<number> }>): void {
  for (const [name, { help, read }] of Object.entries(gauges)) {
    new Gauge({
      name,
      help,
      registers: [metrics.registry],
      async collect() {
        // A source that cannot answer now (the store is down) leaves the gauge as it was: /metrics
        // must keep answering during the very outage it is there to show.
        try {
          this.set(await read());
        } catch {
          return;
        }
      },
    });
  }
}

const tokenOperations: Record<string, string> = {
  '/v5/Authorization/get-oauth-token': 'issue',
  '/v5/Authorization/refresh-oauth-token': 'refresh',
  '/v5/Authorization/revoke-oauth-token': 'revoke',
  '/v1/authenticate': 'legacy_issue',
};

/** Counts outcomes from the answers, so no route has to remember to. */
export function countOutcomes(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    countOutcome(request, reply, metrics);
    done();
  });
}

function countOutcome(request: FastifyRequest, reply: FastifyReply, metrics: Metrics): void {
  const url = request.routeOptions.url ?? '';
  const status = reply.statusCode;
  const operation = tokenOperations[url];
  if (operation) {
    const outcome = status === 200 ? 'ok' : status === 401 ? 'refused' : status === 429 ? 'throttled' : status < 500 ? 'invalid_request' : 'error';
    metrics.tokens.inc({ operation, outcome });
    return;
  }
  if (isVerification(request)) {
    const outcome = status === 401 ? 'unauthorized' : status === 403 ? 'forbidden' : status < 400 ? 'allowed' : 'error';
    metrics.verifications.inc({ outcome });
  }
}

/** Prometheus text, on the admin listener only: the public port must not tell the world how it is doing. */
export function serveMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
