import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    tesseraKafkaBrokers: string;
    tesseraKafkaControllable: boolean;
  }
}

export interface KafkaTestEnvironment {
  /** Bootstrap address of the broker the test run shares, when there is one. */
  readonly brokers: string | undefined;
  /** True when this machine can start brokers of its own (java + the jars or mvn). */
  readonly controllable: boolean;
}

const banner = (lines: string[]) => `\n${'!'.repeat(78)}\n${lines.map((l) => `!! ${l}`).join('\n')}\n${'!'.repeat(78)}\n`;

/**
 * What a Kafka test file may use, read once at its top. test/support/kafka-global-setup.ts
 * provides it. A missing broker makes the file skip, loudly; with TESSERA_REQUIRE_KAFKA=1 the
 * global setup has already failed the run instead.
 */
export function kafkaTestEnvironment(suite: string, needs: 'broker' | 'own-broker' = 'broker'): KafkaTestEnvironment {
  const brokers = inject('tesseraKafkaBrokers') || process.env.TESSERA_KAFKA_BROKERS || undefined;
  const controllable = inject('tesseraKafkaControllable') === true;
  const missing = needs === 'broker' ? !brokers : !controllable;
  if (missing) {
    const why =
      needs === 'broker'
        ? 'no Kafka broker: TESSERA_KAFKA_BROKERS is unset and java + mvn are not both on PATH'
        : 'this suite stops and restarts a broker of its own, which needs java and mvn (or the cached jars)';
    const message = `SKIPPING ${suite}: ${why}. Kafka fan-out is NOT tested in this run. Set TESSERA_REQUIRE_KAFKA=1 to fail instead.`;
    if (process.env.TESSERA_REQUIRE_KAFKA === '1') throw new Error(message);
    console.warn(banner([message]));
  }
  return { brokers, controllable };
}
