import { streams, type SigningKeyEvent } from '@tessera/contracts';
import type { GuardedEventStore } from '@tessera/event-store';
import { followInto, registerGauges, type Host, type RouteRegistrar } from '@tessera/server';
import { createKeyRefresh, tesseraAuth } from '@tessera/verification';
import { exampleRoutes } from './example-routes.js';
import { forwardAuthRoute } from './forward-auth-route.js';
import { revocationRebuildAfter } from './revocation-window.js';
import { nowSeconds, type VerifierParts } from './verifier-parts.js';

/**
 * A verifier fed from the log: rotations and revocations from the rebuild window on (decision
 * 0008), and signing keys read again from their stream when a token names a kid not yet seen.
 */
export function wireLogFedVerifier(host: Host, store: GuardedEventStore, verifier: VerifierParts): void {
  followInto(host, store, [verifier.state.revocationReader], {
    name: 'revocations',
    notReady: 'the revocation projection is catching up with the event log',
    // Rotations and revocations before the keys still usable cannot reject a token: skip them.
    startAfter: () => revocationRebuildAfter(store, nowSeconds()),
  });
  // A key published a moment ago may not have reached the follower yet: read its stream.
  verifier.useKeyRefresh(
    createKeyRefresh(
      async () => {
        for (const { event } of await store.readStream(streams.signingKeys())) verifier.state.keys.apply(event as SigningKeyEvent);
      },
      { cooldownMs: 1_000 },
    ),
  );
}

/**
 * A verifier fed from Kafka and the issuer's JWKS, opening no event store: a verifier in another
 * region. Kafka's client is loaded only here.
 */
export async function wireKafkaFedVerifier(host: Host, verifier: VerifierParts): Promise<void> {
  const { startKafkaRevocations, loadJwks, FeedUnavailable } = await import('./kafka-revocations.js');
  const { config, log } = host;
  let kafka: Awaited<ReturnType<typeof startKafkaRevocations>> | undefined;
  let waitingFor = `Kafka topic ${config.TESSERA_KAFKA_TOPIC}`;
  let closing = false;
  // Set now, filled once the consumer runs: a later wrapper (mirrored regions) keeps consulting it.
  // Until the consumer has read the topic, every token is refused: keys may already be known (the
  // JWKS), revocations not yet, and an auth service that cannot tell must say no.
  const caughtUp = () => kafka !== undefined && kafka.consumer.isReady();
  verifier.useRevocationSource({
    isRejected: (familyId, generation) => !caughtUp() || kafka!.consumer.isRejected(familyId, generation),
    isCutOff: (token) => !caughtUp() || kafka!.consumer.isCutOff(token),
    stats: () => kafka?.consumer.stats() ?? { entries: 0 },
  });
  const jwksUrl = config.TESSERA_ISSUER_JWKS_URL;
  // Key events travel on the topic too; the JWKS covers the moment before they arrive.
  if (jwksUrl) verifier.useKeyRefresh(createKeyRefresh(() => loadJwks(jwksUrl, verifier.state.keys), { cooldownMs: 5_000 }));
  host.onClose(async () => {
    closing = true;
    await kafka?.close();
  });
  host.readiness.add('kafka', () =>
    kafka === undefined
      ? `waiting for ${waitingFor}`
      : kafka.consumer.isReady()
        ? undefined
        : 'the revocation consumer is catching up with Kafka',
  );
  /**
   * A broker that is down or a topic not made yet is waited out, with the cause on /readyz, as the
   * store guard waits for the store: a supervisor restarting a verifier that exits would only
   * hammer the same missing topic. Anything else (a bad JWKS answer, a bug) still ends the start.
   */
  const connect = async (): Promise<void> => {
    let attempts = 0;
    while (!closing) {
      try {
        kafka = await startKafkaRevocations(config, verifier.state.keys, log);
        await kafka.consumer.ready;
        return;
      } catch (error) {
        if (!(error instanceof FeedUnavailable)) throw error;
        attempts += 1;
        waitingFor = `Kafka (${error.message})`;
        if (attempts === 1 || attempts % 15 === 0) log.warn({ err: error, attempts }, 'revocation topic not available yet; retrying');
        await new Promise((resolve) => setTimeout(resolve, 2_000).unref());
      }
    }
  };
  host.untilReady(connect());
}

/** The verifier's routes (the plugin, forward-auth, the example protected routes) and its metrics. */
export function verifierRoutes(host: Host, verifier: VerifierParts): RouteRegistrar {
  host.onClose(async () => verifier.stopForgetting());
  registerGauges(host.metrics, {
    tessera_revocation_projection_entries: { help: 'Families the revocation projection currently holds', read: () => verifier.entries() },
  });
  return verifierRouteRegistrar(verifier);
}

/** The verifier's routes alone: the plugin, forward-auth and the example protected routes. */
export function verifierRouteRegistrar(verifier: Pick<VerifierParts, 'bearer' | 'state'>): RouteRegistrar {
  return async (app, listener) => {
    await app.register(tesseraAuth, { verifier: verifier.bearer });
    await app.register(forwardAuthRoute, { verifier: verifier.bearer });
    // The app's JSON parser serves the charge route (spec 4.4: a JSON body); the v1 GET has no body.
    await app.register(exampleRoutes, { accounts: verifier.state.accounts, v1: listener.v1, v5: listener.v5 });
  };
}
