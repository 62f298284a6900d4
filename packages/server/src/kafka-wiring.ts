import type { Logger } from 'pino';
import type { TesseraConfig } from '@tessera/config';
import type { EventStore } from '@tessera/event-store';
import { createKafkaFeed, type KafkaRevocationFeed } from '@tessera/feed';
import { createFileCheckpoint, createRelay, defaultCheckpointFile, type Relay } from '@tessera/relay';
import { startRevocationConsumer, type RevocationConsumer } from '@tessera/revocations';
import type { PublicKeySet } from '@tessera/tokens';

/** The relay: log → Kafka from a durable checkpoint in the data folder. */
export async function startRelay(config: TesseraConfig, store: EventStore, log: Logger): Promise<{ relay: Relay; close: () => Promise<void> }> {
  const feed: KafkaRevocationFeed = createKafkaFeed({ brokers: config.TESSERA_KAFKA_BROKERS!, topic: config.TESSERA_KAFKA_TOPIC, logger: log });
  // Creating the topic when absent makes first runs work; production creates it with its own settings.
  await feed.ensureTopic();
  const relay = createRelay({ store, feed, checkpoint: createFileCheckpoint(defaultCheckpointFile(config.TESSERA_DATA_DIR)), logger: log });
  await relay.start();
  return {
    relay,
    close: async () => {
      await relay.stop();
      await feed.close();
    },
  };
}

/**
 * A verifier's projection fed from Kafka rather than the log — a verifier in another region.
 * Keys come from the issuer's JWKS at start and from key events on the topic after.
 */
export async function startKafkaRevocations(
  config: TesseraConfig,
  keys: PublicKeySet,
  log: Logger,
): Promise<{ consumer: RevocationConsumer; close: () => Promise<void> }> {
  const feed = createKafkaFeed({ brokers: config.TESSERA_KAFKA_BROKERS!, topic: config.TESSERA_KAFKA_TOPIC, logger: log });
  if (config.TESSERA_ISSUER_JWKS_URL) await loadJwks(config.TESSERA_ISSUER_JWKS_URL, keys);
  const consumer = await startRevocationConsumer({
    feed,
    logger: log,
    clockSkewSeconds: config.TESSERA_CLOCK_SKEW,
    onSigningKeyEvent: (event) => keys.apply(event),
  });
  return {
    consumer,
    close: async () => {
      await consumer.close();
      await feed.close();
    },
  };
}

interface Jwks {
  keys: { kid?: string; kty?: string; crv?: string; x?: string; y?: string }[];
}

export async function loadJwks(url: string, keys: PublicKeySet): Promise<void> {
  const answer = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  if (!answer.ok) throw new Error(`could not load the issuer's JWKS: HTTP ${answer.status}`);
  const jwks = (await answer.json()) as Jwks;
  const at = Math.floor(Date.now() / 1000);
  for (const key of jwks.keys) {
    if (key.kid && key.kty === 'EC' && key.crv === 'P-256' && key.x && key.y) {
      keys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', x: key.x, y: key.y }, at });
    }
  }
}
