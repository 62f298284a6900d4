import type { EachBatchPayload } from 'kafkajs';
import type { CrashingConsumer } from './consumer-supervisor.js';

/** What starting needs of a kafkajs consumer; kafkajs' Consumer is one. */
export interface RunnableConsumer extends CrashingConsumer {
  /** Returns the function that removes the listener. */
  on(eventName: 'consumer.crash', listener: (event: { payload: { error: Error; restart: boolean } }) => void): () => void;
  connect(): Promise<void>;
  subscribe(subscription: { topic: string; fromBeginning: boolean }): Promise<void>;
  run(config: { eachBatchAutoResolve: boolean; autoCommitInterval: number; eachBatch: (payload: EachBatchPayload) => Promise<void> }): Promise<void>;
  seek(position: { topic: string; partition: number; offset: string }): void;
}

/**
 * Connects, subscribes and runs a consumer, then seeks each partition of `seeks` to its offset.
 * Rejects with what stopped it, untranslated; the caller lets go of the consumer.
 *
 * kafkajs' run() resolves even when the consumer never joined its group. It catches the failure
 * to join (a coordinator still loading, a group the principal may not use), stops the consumer,
 * emits `consumer.crash` (`restart: true` when the error is retriable, and then starts it again on
 * a timer; `restart: false` otherwise, and it stays stopped), and returns as if all went well. A
 * seek() after that fails with `Consumer group was not initialized`, which names no cause; the
 * crash names it, so a crash during run() is what this rejects with.
 */
export async function runKafkaConsumer(
  consumer: RunnableConsumer,
  topic: string,
  eachBatch: (payload: EachBatchPayload) => Promise<void>,
  seeks: ReadonlyMap<number, bigint>,
): Promise<void> {
  let crash: Error | undefined;
  const stopListening = consumer.on('consumer.crash', ({ payload }) => {
    crash ??= payload.error;
  });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachBatchAutoResolve: true, autoCommitInterval: 1_000, eachBatch });
  } finally {
    stopListening();
  }
  if (crash !== undefined) throw crash;
  for (const [partition, offset] of seeks) consumer.seek({ topic, partition, offset: offset.toString() });
}
