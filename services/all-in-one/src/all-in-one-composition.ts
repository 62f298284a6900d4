import type { Host } from '@tessera/host';
import { regionSettings } from '@tessera/regions';
import type { Composition } from '@tessera/server';
import { wireIssuerProcess } from '@tessera/service-issuer/process';
import { createVerifierParts } from '@tessera/verifier';

/**
 * `tessera start`'s wiring, the embedded default: the issuer process (`tessera issuer`'s wiring,
 * the same function) with a log-fed verifier sharing its read models, on one store, plus the relay
 * when TESSERA_KAFKA_BROKERS is set.
 */
export async function composeAllInOne(host: Host): Promise<Composition> {
  const { config } = host;
  // With Kafka this process also runs the relay: archiving waits for its checkpoints.
  const { composition, store } = await wireIssuerProcess(host, { verifier: createVerifierParts(host), relayInProcess: config.TESSERA_KAFKA_BROKERS !== undefined });
  if (config.TESSERA_KAFKA_BROKERS) {
    // Kafka's client is loaded only when it is configured.
    const { wireRelay } = await import('@tessera/relay');
    await wireRelay(host, store, regionSettings(host.config)?.own);
  }
  return composition;
}
