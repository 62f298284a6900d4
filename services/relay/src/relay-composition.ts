import type { EventStore } from '@tessera/event-store';
import { createKafkaFeed } from '@tessera/feed';
import { registerCounter, registerGauges, type Host } from '@tessera/server';
import { createFileCheckpoint, defaultCheckpointFile } from './relay-checkpoint.js';
import { createRelay } from './relay.js';

/**
 * Wires the relay into a process: log → Kafka from a durable checkpoint in the data folder,
 * with its lag on /metrics. Stopped first on shutdown, so what it read gets one bounded
 * attempt to reach Kafka while the store is still open.
 */
export async function wireRelay(host: Host, store: EventStore): Promise<void> {
  const { config, log } = host;
  const brokers = config.TESSERA_KAFKA_BROKERS;
  if (!brokers) throw new Error('the relay needs TESSERA_KAFKA_BROKERS');
  const feed = createKafkaFeed({ brokers, topic: config.TESSERA_KAFKA_TOPIC, logger: log });
  // Creating the topic when absent makes first runs work; production creates it with its own settings.
  await feed.ensureTopic();
  const relay = createRelay({ store, feed, checkpoint: createFileCheckpoint(defaultCheckpointFile(config.TESSERA_DATA_DIR)), logger: log });
  await relay.start();
  host.onClose(async () => {
    await relay.stop();
    await feed.close();
  });
  registerCounter(host.metrics, 'tessera_relay_published_total', 'Events acknowledged by Kafka since start', () => relay.published());
  registerGauges(host.metrics, {
    tessera_relay_pending_events: { help: 'Events read from the log and not yet acknowledged by Kafka', read: async () => (await relay.lag()).pendingEvents },
    tessera_relay_oldest_pending_seconds: {
      help: 'Age of the oldest event not yet acknowledged by Kafka: the figure to alert on',
      read: async () => (await relay.lag()).oldestPendingMs / 1000,
    },
  });
}
