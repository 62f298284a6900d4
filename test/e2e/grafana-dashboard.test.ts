import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { metricNamesIn, serves } from '../support/prometheus-names.js';
import { describeServedMetrics, metricsByProcess } from '../support/served-metrics.js';

/**
 * Every metric the Grafana dashboard (infra/grafana/tessera-dashboard.json, also in the Helm chart)
 * queries is one a Tessera process serves on its admin listener: a panel on a misspelt or renamed
 * metric shows "No data", which looks the same as "nothing happened". promtool parses the queries
 * in CI (infra/grafana/dashboard-rules.mjs); this checks their names against real processes. The
 * relay's metrics exist only in `tessera relay` with Kafka (the account relay's also needs a
 * region), a Kafka-fed verifier's and the mirror followers' only in a verifier fed from Kafka that
 * follows another region: each is looked for where it exists, with a real broker.
 */
const { brokers } = kafkaTestEnvironment('Grafana dashboard: the relay and Kafka-fed verifier metrics it names');
const dashboardFile = resolve(import.meta.dirname, '..', '..', 'infra', 'grafana', 'tessera-dashboard.json');

interface Target {
  readonly refId: string;
  readonly expr: string;
}
interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly targets?: readonly Target[];
  readonly panels?: readonly Panel[];
}
interface Dashboard {
  readonly panels: readonly Panel[];
}

// The dashboard's JSON as Grafana exports it; only the fields declared above are read.
const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as Dashboard;
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).filter((panel) => panel.type !== 'row');
const queries = panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));
const queried = [...new Set(queries.flatMap((query) => metricNamesIn(query.expr)))].sort();
const byProcess = metricsByProcess(queried);

describe('the metric names the Grafana dashboard queries', () => {
  it('are read from every panel, all Tessera metrics, on every topic the dashboard shows', () => {
    expect(panels.length).toBeGreaterThan(10);
    expect(byProcess.allInOne.length).toBeGreaterThan(10);
    expect(byProcess.relay).toEqual(expect.arrayContaining(['tessera_relay_oldest_pending_seconds', 'tessera_account_relay_oldest_pending_seconds']));
    expect(byProcess.kafkaVerifier).toEqual(expect.arrayContaining(['tessera_kafka_verifier_lag_seconds', 'tessera_mirror_lag_seconds']));
    for (const query of queries) expect(metricNamesIn(query.expr), `metrics in "${query.panel}"`).not.toHaveLength(0);
    for (const name of queried) expect(name).toMatch(/^tessera_/);
    // Revocation latency, issuance, Kafka lag, Shared Signals, event loop, audit index, archive.
    expect(queried).toEqual(
      expect.arrayContaining([
        'tessera_event_store_append_seconds_bucket',
        'tessera_relay_oldest_pending_seconds',
        'tessera_kafka_verifier_lag_seconds',
        'tessera_tokens_total',
        'tessera_ssf_delivered_total',
        'tessera_nodejs_eventloop_lag_p99_seconds',
        'tessera_audit_index_position',
        'tessera_archive_lag_seconds',
      ]),
    );
  });

  it('counts a histogram series as its family and nothing else as one', () => {
    const families = new Map([
      ['tessera_event_store_append_seconds', 'histogram'],
      ['tessera_archive_lag_seconds', 'gauge'],
    ]);
    expect(serves(families, 'tessera_event_store_append_seconds_bucket')).toBe(true);
    expect(serves(families, 'tessera_event_store_append_seconds_count')).toBe(true);
    expect(serves(families, 'tessera_archive_lag_seconds_count')).toBe(false);
    expect(serves(families, 'tessera_event_store_append_second_bucket')).toBe(false);
  });
});

describeServedMetrics('the Grafana dashboard panels', queried, brokers);
