import { join } from 'node:path';
import { ConfigError, kafkaSecurityOf } from '@tessera/config';
import { accountTopicEventTypes, familyCheckEventTypes, type PublishedEventType } from '@tessera/contracts';
import type { EventStore } from '@tessera/event-store';
import { createKafkaFeed, feedEventTypes } from '@tessera/feed';
import { registerCounter, registerGauges, type Host } from '@tessera/host';
import { createFileCheckpoint, defaultCheckpointFile } from './relay-checkpoint.js';
import { createRelay } from './relay.js';

/** One log → topic flow: what it carries, where, and which checkpoint file says how far it got. */
interface RelayFlow {
  readonly topic: string;
  readonly types: readonly PublishedEventType[];
  readonly checkpointFile: string;
  /** Metric name prefix, e.g. `tessera_relay` → tessera_relay_published_total. */
  readonly metricPrefix: string;
  readonly describes: string;
}

/**
 * The flows this process relays. Revocations always. Account events (credentials, permissions,
 * cuts, and the control region's changes) and family events only when the process has a region
 * (`region`, from the region settings):
 * the first let another region's issuer authenticate this region's credentials through
 * MirrorMaker 2, the second let it check a refresh token of this region's families that it is
 * asked to revoke while this region is out of reach (docs/multi-region.md). A single-region
 * deployment has no reader for either.
 */
export function relayFlows(config: Host['config'], region: string | undefined): RelayFlow[] {
  const flows: RelayFlow[] = [
    {
      topic: config.TESSERA_KAFKA_TOPIC,
      types: feedEventTypes,
      checkpointFile: defaultCheckpointFile(config.TESSERA_DATA_DIR),
      metricPrefix: 'tessera_relay',
      describes: 'revocation and key events',
    },
  ];
  if (region !== undefined) {
    flows.push({
      topic: config.TESSERA_KAFKA_ACCOUNT_TOPIC,
      types: accountTopicEventTypes,
      checkpointFile: join(config.TESSERA_DATA_DIR, 'relay-accounts-checkpoint.json'),
      metricPrefix: 'tessera_account_relay',
      describes: 'account events',
    });
    flows.push({
      topic: config.TESSERA_KAFKA_FAMILY_TOPIC,
      types: familyCheckEventTypes,
      checkpointFile: join(config.TESSERA_DATA_DIR, 'relay-families-checkpoint.json'),
      metricPrefix: 'tessera_family_relay',
      describes: 'family events',
    });
  }
  return flows;
}

/**
 * Wires the relay into a process: log → Kafka from a durable checkpoint in the data folder,
 * with its lag on /metrics. Stopped first on shutdown, so what it read gets one bounded
 * attempt to reach Kafka while the store is still open. Each flow has its own checkpoint, so
 * a slow topic never holds another back and neither can skip what the other has not sent.
 * `region`: this process's region, when it has one (the account and family topics are relayed too).
 */
export async function wireRelay(host: Host, store: EventStore, region?: string): Promise<void> {
  const { config, log } = host;
  const brokers = config.TESSERA_KAFKA_BROKERS;
  // The configuration refuses a relay without brokers; the all-in-one wires it only with them.
  if (!brokers) throw new ConfigError('the relay needs TESSERA_KAFKA_BROKERS');
  // TLS and SASL from TESSERA_KAFKA_*, files read now: a missing CA or password file stops the start.
  const security = kafkaSecurityOf(config);
  for (const flow of relayFlows(config, region)) {
    const feed = createKafkaFeed({ brokers, topic: flow.topic, logger: log, ...security });
    const relay = createRelay({
      store,
      feed,
      types: flow.types,
      checkpoint: createFileCheckpoint(flow.checkpointFile, host.clock),
      clock: host.clock,
      logger: log.child({ topic: flow.topic }),
      // Creating the topic when absent makes first runs work; production creates it with its own
      // settings. In the background: Kafka down at start delays the relay, not the issuer.
      prepareFeed: () => feed.ensureTopic(),
    });
    await relay.start();
    host.onClose(async () => {
      await relay.stop();
      await feed.close();
    });
    registerCounter(host.metrics, `${flow.metricPrefix}_published_total`, `Events acknowledged by Kafka since start (${flow.describes}, topic ${flow.topic})`, () => relay.published());
    registerGauges(host.metrics, {
      [`${flow.metricPrefix}_pending_events`]: { help: `Events read from the log and not yet acknowledged by Kafka (${flow.describes})`, read: async () => (await relay.lag()).pendingEvents },
      [`${flow.metricPrefix}_oldest_pending_seconds`]: {
        help: `Age of the oldest event not yet acknowledged by Kafka (${flow.describes}): the figure to alert on`,
        read: async () => (await relay.lag()).oldestPendingMs / 1000,
      },
    });
  }
}
