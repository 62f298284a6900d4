import kafkajs, { type KafkaConfig } from 'kafkajs';
import { Retry, systemClock } from '@tessera/timing';

/**
 * A fresh broker creates __consumer_offsets on the first group request, and kafkajs backs off
 * for seconds while it does. Asking for a group once, before the tests, keeps that wait out
 * of every test's timing.
 */
export async function warmUpKafka(brokers: string, timeoutMs = 30_000, security: Pick<KafkaConfig, 'ssl' | 'sasl'> = {}): Promise<void> {
  const kafka = new kafkajs.Kafka({ clientId: 'tessera-warm-up', brokers: brokers.split(','), ...security, logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin({ retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 500 } });
  try {
    await admin.connect();
    const outcome = await new Retry({ backoff: { initialMs: 100, maxMs: 100 } }).run(() => admin.describeGroups(['tessera-warm-up']), { deadlineMs: systemClock.now() + timeoutMs });
    if (!outcome.done) throw outcome.error;
  } finally {
    await admin.disconnect();
  }
}
