import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familiesIn, serves } from './prometheus-names.js';
import { startTessera, type TesseraProcess } from './tessera-process.js';

/** Metric names split by the process that serves them. */
export interface MetricsByProcess {
  /** Only in a process that relays (Kafka configured; the account relay's also needs TESSERA_REGION). */
  readonly relay: readonly string[];
  /** Only in a verifier fed from Kafka that follows another region (the Kafka verifier's and the mirror followers'). */
  readonly kafkaVerifier: readonly string[];
  /** Every other one: served by `tessera start`. */
  readonly allInOne: readonly string[];
}

export function metricsByProcess(names: readonly string[]): MetricsByProcess {
  const isRelay = (name: string) => /^tessera_(account_|family_)?relay_/.test(name);
  const isKafkaVerifier = (name: string) => /^tessera_(kafka_verifier|mirror)_/.test(name);
  return { relay: names.filter(isRelay), kafkaVerifier: names.filter(isKafkaVerifier), allInOne: names.filter((name) => !isRelay(name) && !isKafkaVerifier(name)) };
}

async function missingOn(process: TesseraProcess, names: readonly string[]): Promise<string[]> {
  const answer = await process.adminRequest('/metrics');
  expect(answer.status).toBe(200);
  const families = familiesIn(answer.text);
  return names.filter((name) => !serves(families, name));
}

/**
 * Looks for each metric `what` names (alert rules, a dashboard) on /metrics of a real process that
 * serves it, started the way it runs in production: `tessera start`; `tessera relay` with Kafka and
 * a region; `tessera verifier` fed from Kafka, following another region. The last two need a
 * broker (`brokers`) and are skipped without one.
 */
export function describeServedMetrics(what: string, names: readonly string[], brokers: string | undefined): void {
  const byProcess = metricsByProcess(names);
  const topics = (role: string) => `${what.replace(/[^a-z]+/gi, '-').toLowerCase()}.${role}.${process.pid}.${Date.now()}`;

  describe(`${what} name metrics an all-in-one serves`, () => {
    let tessera: TesseraProcess;
    beforeAll(async () => {
      tessera = await startTessera();
    });
    afterAll(async () => {
      await tessera?.stop();
    });

    it(`finds every metric ${what} name, other than the relay and Kafka-fed verifier ones, on /metrics of tessera start`, async () => {
      expect(await missingOn(tessera, byProcess.allInOne)).toEqual([]);
    });
  });

  describe.skipIf(!brokers)(`${what} name metrics a relay serves`, () => {
    let relay: TesseraProcess;
    beforeAll(async () => {
      relay = await startTessera(
        {
          TESSERA_KAFKA_BROKERS: brokers!,
          TESSERA_KAFKA_TOPIC: `tessera.revocations.${topics('relay')}`,
          TESSERA_KAFKA_ACCOUNT_TOPIC: `tessera.accounts.${topics('relay')}`,
          TESSERA_KAFKA_FAMILY_TOPIC: `tessera.families.${topics('relay')}`,
          // A region makes the relay publish account events too, with metrics of their own.
          TESSERA_REGION: 'eu1',
        },
        { command: 'relay' },
      );
    });
    afterAll(async () => {
      await relay?.stop();
    });

    it(`finds every relay metric ${what} name on /metrics of tessera relay with Kafka and a region`, async () => {
      expect(await missingOn(relay, byProcess.relay)).toEqual([]);
    });
  });

  describe.skipIf(!brokers)(`${what} name metrics a Kafka-fed verifier following another region serves`, () => {
    let verifier: TesseraProcess;
    beforeAll(async () => {
      verifier = await startTessera(
        {
          TESSERA_VERIFIER_SOURCE: 'kafka',
          TESSERA_KAFKA_BROKERS: brokers!,
          TESSERA_KAFKA_TOPIC: `tessera.revocations.${topics('verifier')}`,
          TESSERA_KAFKA_ACCOUNT_TOPIC: `tessera.accounts.${topics('verifier')}`,
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

    it(`finds every Kafka-fed verifier and mirror metric ${what} name on /metrics of tessera verifier fed from Kafka with a mirrored region`, async () => {
      expect(await missingOn(verifier, byProcess.kafkaVerifier)).toEqual([]);
    });
  });
}
