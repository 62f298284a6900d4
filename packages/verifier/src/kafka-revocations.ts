import type { KafkaSecurity, TesseraConfig } from '@tessera/config';
import { createKafkaFeed } from '@tessera/feed';
import type { Host } from '@tessera/host';
import { startRevocationConsumer, type RevocationConsumer } from '@tessera/revocations';
import { loadJwks, type PublicKeySet } from '@tessera/verification';

/**
 * A verifier's projection fed from Kafka rather than the log — a verifier in another region.
 * Keys come from the issuer's JWKS at start and from key events on the topic after.
 */
export async function startKafkaRevocations(
  config: TesseraConfig,
  security: KafkaSecurity,
  keys: PublicKeySet,
  log: Host['log'],
): Promise<{ consumer: RevocationConsumer; close: () => Promise<void> }> {
  const feed = createKafkaFeed({ brokers: config.TESSERA_KAFKA_BROKERS!, topic: config.TESSERA_KAFKA_TOPIC, logger: log, ...security });
  if (config.TESSERA_ISSUER_JWKS_URL) await loadJwks(config.TESSERA_ISSUER_JWKS_URL, keys);
  let consumer: RevocationConsumer;
  try {
    consumer = await startRevocationConsumer({
      feed,
      logger: log,
      clockSkewSeconds: config.TESSERA_CLOCK_SKEW,
      onSigningKeyEvent: (event) => keys.apply(event),
    });
  } catch (error) {
    // The caller may try again (the topic may not exist yet): leave no producer or admin client behind.
    await feed.close().catch(() => undefined);
    throw error;
  }
  return {
    consumer,
    close: async () => {
      await consumer.close();
      await feed.close();
    },
  };
}

export { loadJwks };
export { FeedUnavailable } from '@tessera/feed';
