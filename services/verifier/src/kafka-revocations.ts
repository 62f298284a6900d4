import type { Logger } from 'pino';
import type { TesseraConfig } from '@tessera/config';
import { createKafkaFeed } from '@tessera/feed';
import { startRevocationConsumer, type RevocationConsumer } from '@tessera/revocations';
import type { PublicKeySet } from '@tessera/tokens';

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
