import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { metricNamesIn } from '../support/prometheus-names.js';
import { describeServedMetrics, metricsByProcess } from '../support/served-metrics.js';

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
const byProcess = metricsByProcess(alerted);

describe('the metric names the alert rules read', () => {
  it('are found in every alert expression, all Tessera metrics, relay ones among them', () => {
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) expect(metricNamesIn(rule.expr), `metrics in ${rule.alert}`).not.toHaveLength(0);
    expect(alerted).toContain('tessera_ready');
    for (const name of alerted) expect(name).toMatch(/^tessera_/);
    expect(byProcess.relay.length).toBeGreaterThan(0);
    expect(byProcess.kafkaVerifier).toEqual(expect.arrayContaining(['tessera_kafka_verifier_lag_seconds', 'tessera_mirror_lag_seconds']));
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

describeServedMetrics('the alert rules', alerted, brokers);
