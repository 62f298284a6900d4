import { readFileSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { adminConnection } from '../../packages/feed/src/testing/secured-kafka-environment.js';
import { warmUpKafka } from '../../packages/feed/src/testing/warm-up.js';
import { onPath } from '../../infra/kafka/command-line.js';
import { canRunKafkaBroker, startKafkaBroker, type KafkaBroker } from '../../infra/kafka/kafka-broker.js';
import { securedTestBrokerSecurity } from '../../infra/kafka/secured-test-broker.js';
import { dockerEngineLikely, kafkaImage, startKafkaContainer } from './kafka-container.js';

declare module 'vitest' {
  export interface ProvidedContext {
    tesseraKafkaBrokers: string;
    tesseraKafkaControllable: boolean;
  }
}

/** Test files that use a broker call these helpers; the markers keep broker start-up out of runs that need none. */
const kafkaMarker = 'kafkaTestEnvironment(';
const securedKafkaMarker = 'securedKafkaEnvironment(';

function selectedFilesUse(project: TestProject, marker: string): boolean {
  // vitest.state lists the files of this run. Should that internal ever change, start the broker anyway.
  const state = (project.vitest as { state?: { getPaths?: () => string[] } }).state;
  const paths = state?.getPaths?.();
  if (!paths) return true;
  return paths.some((path) => {
    if (!project.matchesTestGlob(path)) return false;
    try {
      return readFileSync(path, 'utf8').includes(marker);
    } catch {
      return false;
    }
  });
}

/**
 * One broker for the test run, for the projects whose selected files use Kafka:
 * - TESSERA_KAFKA_BROKERS set: that broker is used, nothing is started.
 * - else java and mvn present: a real KRaft broker from infra/kafka, stopped in teardown.
 * - else a Docker engine: a broker container through testcontainers, stopped in teardown.
 * - else none, and Kafka tests skip loudly; TESSERA_REQUIRE_KAFKA=1 turns that into a failure here.
 * And one secured broker (SASL_SSL, mutual TLS, ACLs) for the files that ask for it, when java
 * and openssl are here.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  // vitest runs a global setup for the root project too; the projects that run files are the ones that matter.
  if (project.isRootProject()) return undefined;
  // Started side by side: each JVM spends much of its start waiting, not computing.
  const [secured, plain] = await Promise.all([
    selectedFilesUse(project, securedKafkaMarker) ? startSecuredBroker(project) : undefined,
    selectedFilesUse(project, kafkaMarker) ? startPlainBroker(project) : undefined,
  ]);
  if (!secured && !plain) return undefined;
  return async () => {
    await secured?.destroy();
    await plain?.();
  };
}

async function startSecuredBroker(project: TestProject): Promise<KafkaBroker | undefined> {
  project.provide('tesseraSecuredKafka', null);
  if (!canRunKafkaBroker() || !onPath('openssl')) {
    const why = 'no secured Kafka broker: it needs java and mvn (or the cached jars) and openssl';
    if (process.env.TESSERA_REQUIRE_KAFKA === '1') throw new Error(`TESSERA_REQUIRE_KAFKA=1 but ${why}`);
    console.warn(`\n!!! [kafka] ${why}: Kafka security tests in project ${project.name} will SKIP !!!\n`);
    return undefined;
  }
  const started = Date.now();
  const broker = await startKafkaBroker({ security: securedTestBrokerSecurity });
  const security = broker.security!;
  try {
    await warmUpKafka(broker.bootstrap, 30_000, adminConnection(security));
  } catch (error) {
    await broker.destroy();
    throw error;
  }
  // Passwords travel to the test workers in memory only; the log line names paths, never them.
  console.info(`[kafka] ${project.name}: secured broker ${broker.bootstrap} (SASL_SSL), ${security.mtlsBootstrap} (mutual TLS) ready in ${Date.now() - started} ms (log ${broker.logFile})`);
  project.provide('tesseraSecuredKafka', security);
  return broker;
}

async function startPlainBroker(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const controllable = canRunKafkaBroker();
  project.provide('tesseraKafkaControllable', controllable);
  let brokers = process.env.TESSERA_KAFKA_BROKERS || undefined;
  let broker: KafkaBroker | undefined;
  if (!brokers && controllable) {
    const started = Date.now();
    broker = await startKafkaBroker();
    brokers = broker.bootstrap;
    await warmUpKafka(brokers);
    console.info(`[kafka] ${project.name}: broker ${brokers} ready in ${Date.now() - started} ms (log ${broker.logFile})`);
  }
  let container: Awaited<ReturnType<typeof startKafkaContainer>> | undefined;
  if (!brokers && dockerEngineLikely()) {
    const started = Date.now();
    try {
      container = await startKafkaContainer();
      brokers = container.bootstrap;
      await warmUpKafka(brokers);
      console.info(`[kafka] ${project.name}: ${kafkaImage} container ${brokers} ready in ${Date.now() - started} ms`);
    } catch (error) {
      console.warn(`[kafka] a Docker engine seemed present but no Kafka container started: ${(error as Error).message}`);
    }
  }
  if (!brokers) {
    const why = 'no Kafka broker: TESSERA_KAFKA_BROKERS is unset, java + mvn are not both on PATH, and no Docker engine answered';
    if (process.env.TESSERA_REQUIRE_KAFKA === '1') throw new Error(`TESSERA_REQUIRE_KAFKA=1 but ${why}`);
    console.warn(`\n!!! [kafka] ${why}: Kafka tests in project ${project.name} will SKIP !!!\n`);
    return undefined;
  }
  process.env.TESSERA_KAFKA_BROKERS = brokers;
  project.provide('tesseraKafkaBrokers', brokers);
  return async () => {
    await broker?.destroy();
    await container?.stop();
  };
}
