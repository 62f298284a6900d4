import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { familiesIn, metricNamesIn, serves } from '../support/prometheus-names.js';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

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
const isRelayMetric = (name: string) => /^tessera_(account_|family_)?relay_/.test(name);
const isKafkaVerifierMetric = (name: string) => /^tessera_(kafka_verifier|mirror)_/.test(name);
const relayMetrics = queried.filter(isRelayMetric);
const kafkaVerifierMetrics = queried.filter(isKafkaVerifierMetric);
const allInOneMetrics = queried.filter((name) => !isRelayMetric(name) && !isKafkaVerifierMetric(name));

describe('the metric names the Grafana dashboard queries', () => {
  it('are read from every panel, all Tessera metrics, on every topic the dashboard shows', () => {
    expect(panels.length).toBeGreaterThan(10);
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

describe('the Grafana dashboard names metrics an all-in-one serves', () => {
  let tessera: TesseraProcess;
  beforeAll(async () => {
    tessera = await startTessera();
  });
  afterAll(async () => {
    await tessera?.stop();
  });

  it('finds every metric the panels query, other than the relay and Kafka-fed verifier ones, on /metrics of tessera start', async () => {
    const answer = await tessera.adminRequest('/metrics');
    expect(answer.status).toBe(200);
    const families = familiesIn(answer.text);
    expect(allInOneMetrics.length).toBeGreaterThan(10);
    expect(allInOneMetrics.filter((name) => !serves(families, name))).toEqual([]);
  });
});

describe.skipIf(!brokers)('the Grafana dashboard names metrics a relay serves', () => {
  let relay: TesseraProcess;
  beforeAll(async () => {
    const run = `${process.pid}.${Date.now()}`;
    relay = await startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers!,
        TESSERA_KAFKA_TOPIC: `tessera.revocations.dashboard.${run}`,
        TESSERA_KAFKA_ACCOUNT_TOPIC: `tessera.accounts.dashboard.${run}`,
        TESSERA_KAFKA_FAMILY_TOPIC: `tessera.families.dashboard.${run}`,
        // A region makes the relay publish account events too, with metrics of their own.
        TESSERA_REGION: 'eu1',
      },
      { command: 'relay' },
    );
  });
  afterAll(async () => {
    await relay?.stop();
  });

  it('finds every relay metric the panels query on /metrics of tessera relay with Kafka and a region', async () => {
    expect(relayMetrics).toEqual(expect.arrayContaining(['tessera_relay_oldest_pending_seconds', 'tessera_account_relay_oldest_pending_seconds']));
    const answer = await relay.adminRequest('/metrics');
    expect(answer.status).toBe(200);
    const families = familiesIn(answer.text);
    expect(relayMetrics.filter((name) => !serves(families, name))).toEqual([]);
  });
});

describe.skipIf(!brokers)('the Grafana dashboard names metrics a Kafka-fed verifier following another region serves', () => {
  let verifier: TesseraProcess;
  beforeAll(async () => {
    const run = `${process.pid}.${Date.now()}`;
    verifier = await startTessera(
      {
        TESSERA_VERIFIER_SOURCE: 'kafka',
        TESSERA_KAFKA_BROKERS: brokers!,
        TESSERA_KAFKA_TOPIC: `tessera.revocations.dashboard-verifier.${run}`,
        TESSERA_KAFKA_ACCOUNT_TOPIC: `tessera.accounts.dashboard-verifier.${run}`,
        TESSERA_REGION: 'b',
        TESSERA_MIRRORED_REGIONS: 'a',
      },
      // Its topics do not exist: it serves /metrics without being ready.
      { command: 'verifier', until: 'listening' },
    );
  });
  afterAll(async () => {
    await verifier?.stop();
  });

  it('finds every Kafka-fed verifier and mirror metric the panels query on /metrics of tessera verifier fed from Kafka with a mirrored region', async () => {
    expect(kafkaVerifierMetrics).toEqual(expect.arrayContaining(['tessera_kafka_verifier_lag_seconds', 'tessera_mirror_lag_seconds']));
    const answer = await verifier.adminRequest('/metrics');
    expect(answer.status).toBe(200);
    const families = familiesIn(answer.text);
    expect(kafkaVerifierMetrics.filter((name) => !serves(families, name))).toEqual([]);
  });
});
