import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { familiesIn, metricNamesIn, serves } from '../support/prometheus-names.js';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Every metric the alerts of infra/prometheus/alerts.yml read is one Tessera serves on its admin
 * listener, and every alert's runbook_url leads to its section of docs/operations.md: a rule on a misspelt or renamed metric never fires, and promtool's unit tests cannot
 * tell, since they feed the series themselves. The relay's metrics exist only in a process that
 * relays (Kafka configured; the account relay's also needs TESSERA_REGION), so they are looked for
 * on `tessera relay` with a real broker, the way it runs in production; a Kafka-fed verifier's and
 * the mirror followers' only in a verifier fed from Kafka that follows another region, so they are
 * looked for on one.
 */
const { brokers } = kafkaTestEnvironment('alert rules: the relay metrics they name');
const rulesFile = resolve(import.meta.dirname, '..', '..', 'infra', 'prometheus', 'alerts.yml');

interface Rule {
  readonly alert?: string;
  readonly expr: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}
interface RuleFile {
  readonly groups: readonly { readonly rules: readonly Rule[] }[];
}
const operationsGuide = resolve(import.meta.dirname, '..', '..', 'docs', 'operations.md');

/** The anchors GitHub gives a Markdown file's headings: lower case, spaces to hyphens, punctuation dropped. */
function headingAnchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((heading) =>
      heading[1]!
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9 _-]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

const rules = (parse(readFileSync(rulesFile, 'utf8')) as RuleFile).groups.flatMap((group) => group.rules);
const alerted = [...new Set(rules.flatMap((rule) => metricNamesIn(rule.expr)))].sort();
const isRelayMetric = (name: string) => /^tessera_(account_)?relay_/.test(name);
const isKafkaVerifierMetric = (name: string) => /^tessera_(kafka_verifier|mirror)_/.test(name);
const relayMetrics = alerted.filter(isRelayMetric);
const kafkaVerifierMetrics = alerted.filter(isKafkaVerifierMetric);
const otherMetrics = alerted.filter((name) => !isRelayMetric(name) && !isKafkaVerifierMetric(name));

describe('the metric names the alert rules read', () => {
  it('are found in every alert expression, all Tessera metrics, relay ones among them', () => {
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) expect(metricNamesIn(rule.expr), `metrics in ${rule.alert}`).not.toHaveLength(0);
    expect(alerted).toContain('tessera_ready');
    for (const name of alerted) expect(name).toMatch(/^tessera_/);
    expect(relayMetrics.length).toBeGreaterThan(0);
    expect(kafkaVerifierMetrics).toEqual(expect.arrayContaining(['tessera_kafka_verifier_lag_seconds', 'tessera_mirror_lag_seconds']));
  });

  it('each alert has a severity, a summary, a description and a runbook_url to its own section of docs/operations.md', () => {
    const anchors = headingAnchors(readFileSync(operationsGuide, 'utf8'));
    for (const rule of rules) {
      expect(rule.labels?.severity, `severity of ${rule.alert}`).toMatch(/^(warning|critical)$/);
      expect(rule.annotations?.summary, `summary of ${rule.alert}`).toBeTruthy();
      expect(rule.annotations?.description, `description of ${rule.alert}`).toBeTruthy();
      expect(rule.annotations?.runbook_url).toBe(`docs/operations.md#alert-${rule.alert!.toLowerCase()}`);
      expect(anchors.has(`alert-${rule.alert!.toLowerCase()}`), `a heading "Alert: ${rule.alert}" in docs/operations.md`).toBe(true);
    }
  });

  it('reads a PromQL expression the way the check below needs', () => {
    expect(metricNamesIn('sum by (job, operation) (rate(tessera_tokens_total{outcome="error"}[5m])) / sum by (job) (rate(tessera_tokens_total[5m])) > 0.05')).toEqual([
      'tessera_tokens_total',
    ]);
    expect(metricNamesIn('histogram_quantile(0.99, sum by (le) (rate(tessera_event_store_append_seconds_bucket[5m]))) and on (instance) tessera_ready == 1')).toEqual([
      'tessera_event_store_append_seconds_bucket',
      'tessera_ready',
    ]);
  });
});

describe('alert rules name metrics an all-in-one serves', () => {
  let tessera: TesseraProcess;
  beforeAll(async () => {
    tessera = await startTessera();
  });
  afterAll(async () => {
    await tessera?.stop();
  });

  it('finds every metric the rules read, other than the relay ones, on /metrics of tessera start', async () => {
    const answer = await tessera.adminRequest('/metrics');
    expect(answer.status).toBe(200);
    const families = familiesIn(answer.text);
    expect(otherMetrics.filter((name) => !serves(families, name))).toEqual([]);
  });
});

describe.skipIf(!brokers)('alert rules name metrics a relay serves', () => {
  let relay: TesseraProcess;
  beforeAll(async () => {
    const run = `${process.pid}.${Date.now()}`;
    relay = await startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers!,
        TESSERA_KAFKA_TOPIC: `tessera.revocations.alerts.${run}`,
        TESSERA_KAFKA_ACCOUNT_TOPIC: `tessera.accounts.alerts.${run}`,
        // A region makes the relay publish account events too, with metrics of their own.
        TESSERA_REGION: 'eu1',
      },
      { command: 'relay' },
    );
  });
  afterAll(async () => {
    await relay?.stop();
  });

  it('finds every relay metric the rules read on /metrics of tessera relay with Kafka and a region', async () => {
    const answer = await relay.adminRequest('/metrics');
    expect(answer.status).toBe(200);
    const families = familiesIn(answer.text);
    expect(relayMetrics.filter((name) => !serves(families, name))).toEqual([]);
  });
});

describe.skipIf(!brokers)('alert rules name metrics a Kafka-fed verifier following another region serves', () => {
  let verifier: TesseraProcess;
  beforeAll(async () => {
    const run = `${process.pid}.${Date.now()}`;
    verifier = await startTessera(
      {
        TESSERA_VERIFIER_SOURCE: 'kafka',
        TESSERA_KAFKA_BROKERS: brokers!,
        TESSERA_KAFKA_TOPIC: `tessera.revocations.alerts-verifier.${run}`,
        TESSERA_KAFKA_ACCOUNT_TOPIC: `tessera.accounts.alerts-verifier.${run}`,
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

  it('finds every Kafka-fed verifier and mirror metric the rules read on /metrics of tessera verifier fed from Kafka with a mirrored region', async () => {
    const answer = await verifier.adminRequest('/metrics');
    expect(answer.status).toBe(200);
    const families = familiesIn(answer.text);
    expect(kafkaVerifierMetrics.filter((name) => !serves(families, name))).toEqual([]);
  });
});
