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
  const { startKafkaRevocations, loadJwks } = await import('./kafka-revocations.js');
  const kafka = await startKafkaRevocations(host.config, verifier.state.keys, host.log);
  verifier.useRevocationSource(kafka.consumer);
  const jwksUrl = host.config.TESSERA_ISSUER_JWKS_URL;
  // Key events travel on the topic too; the JWKS covers the moment before they arrive.
  if (jwksUrl) verifier.useKeyRefresh(createKeyRefresh(() => loadJwks(jwksUrl, verifier.state.keys), { cooldownMs: 5_000 }));
  host.onClose(kafka.close);
  host.readiness.add('kafka', () => (kafka.consumer.isReady() ? undefined : 'the revocation consumer is catching up with Kafka'));
  host.untilReady(kafka.consumer.ready);
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
