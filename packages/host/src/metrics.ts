import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EventStore } from '@tessera/event-store';
import { aroundAppend } from './around-append.js';
import { talliedCounter } from './tallied-counter.js';

/**
 * Prometheus metrics for operators, one registry per process. Names are stable: dashboards
 * and alerts are written against them (docs/operations.md lists them, and a test holds the list
 * to what /metrics exposes).
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'tessera_' });
  // prom-client names three of its gauges with a counter's `_total` suffix, which promtool (and
  // Prometheus's naming rules) reject for a gauge; the heap and event-loop metrics say the same.
  for (const misnamed of ['active_handles_total', 'active_requests_total', 'active_resources_total']) registry.removeSingleMetric(`tessera_nodejs_${misnamed}`);
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Counter({ name, help, labelNames, registers: [registry] });
  return {
    registry,
    // Counted on every answer (http-metrics.ts in the server), so through tallies.
    tokens: talliedCounter(
      registry,
      'tessera_tokens_total',
      'Token operations by operation (issue, refresh, revoke, legacy_issue; oauth_token, introspect, oauth_revoke) and outcome (ok, refused, throttled, invalid_request, error)',
      ['operation', 'outcome'],
    ),
    verifications: talliedCounter(registry, 'tessera_verifications_total', 'Bearer token decisions on protected routes and forward-auth by outcome (allowed, unauthorized, forbidden)', ['outcome']),
    appendSeconds: new Histogram({
      name: 'tessera_event_store_append_seconds',
      help: 'Time from append call to durable commit',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    throttled: counter(
      'tessera_throttled_total',
      'Token operations answered 429 because a failure budget was spent, by operation and scope (credential: one credential id from one address; address: one address; proxy: one trusted proxy, for the clients it forwarded)',
      ['operation', 'scope'],
    ),
    connectionsRefused: counter('tessera_connections_refused_total', 'Connections closed on arrival because a listener held its maximum, in total or from that source address', ['reason']),
    httpResponses: talliedCounter(
      registry,
      'tessera_http_responses_total',
      'HTTP answers on every listener by route (the route pattern, or "unmatched" for a path no route serves) and status class (1xx to 5xx)',
      ['route', 'status_class'],
    ),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Wraps a store so every append is timed; everything else passes through. */
export function instrumentEventStore(store: EventStore, metrics: Metrics): EventStore {
  return aroundAppend(store, async (stream, events, options) => {
    const stop = metrics.appendSeconds.startTimer();
    try {
      return await store.append(stream, events, options);
    } finally {
      stop();
    }
  });
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

/**
 * A gauge with labels, each series read at scrape time: `read` answers the labels and value of
 * every series there is now. A source that cannot answer leaves the series as they were.
 */
export function registerLabelledGauge<L extends string>(
  metrics: Metrics,
  name: string,
  help: string,
  labelNames: readonly L[],
  read: () => Promise<readonly (readonly [Record<L, string>, number])[]>,
): void {
  new Gauge({
    name,
    help,
    labelNames,
    registers: [metrics.registry],
    async collect() {
      try {
        for (const [labels, value] of await read()) this.set(labels, value);
      } catch {
        return;
      }
    },
  });
}

/** A counter with one label, read at scrape time from running totals the process keeps (each only grows). */
export function registerLabelledCounter(metrics: Metrics, name: string, help: string, label: string, read: () => Readonly<Record<string, number>>): void {
  const reported = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames: [label],
    registers: [metrics.registry],
    collect() {
      for (const [value, total] of Object.entries(read())) {
        const before = reported.get(value) ?? 0;
        if (total > before) this.inc({ [label]: value }, total - before);
        reported.set(value, total);
      }
    },
  });
}
