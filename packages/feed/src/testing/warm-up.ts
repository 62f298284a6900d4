import kafkajs, { type KafkaConfig } from 'kafkajs';

/**
 * A fresh broker creates __consumer_offsets on the first group request, and kafkajs backs off
 * for seconds while it does. Asking for a group once, before the tests, keeps that wait out
 * of every test's timing.
 */
export async function warmUpKafka(brokers: string, timeoutMs = 30_000, security: Pick<KafkaConfig, 'ssl' | 'sasl'> = {}): Promise<void> {
  const kafka = new kafkajs.Kafka({ clientId: 'tessera-warm-up', brokers: brokers.split(','), ...security, logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin({ retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 500 } });
  const deadline = Date.now() + timeoutMs;
  try {
    await admin.connect();
    for (;;) {
      try {
        await admin.describeGroups(['tessera-warm-up']);
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await admin.disconnect();
  }
}
