import { kafkaSecurityOf } from '@tessera/config';
import { isEventOf, signingKeyEventTypes, streams } from '@tessera/events';
import { revocationRebuildAfter, type GuardedEventStore } from '@tessera/event-store';
import { Retry, epochSeconds, followInto, registerGauges, type Host } from '@tessera/host';
import type { RouteRegistrar } from '@tessera/server';
import { createKeyRefresh, tesseraAuth } from '@tessera/verification';
import { exampleRoutes } from './example-routes.js';
import { forwardAuthRoute } from './forward-auth-route.js';
import type { VerifierParts } from './verifier-parts.js';

/**
 * A verifier fed from the log: rotations and revocations from the rebuild window on (decision
 * 0008), and signing keys read again from their stream when a token names a kid not yet seen.
 */
export function wireLogFedVerifier(host: Host, store: GuardedEventStore, verifier: VerifierParts): void {
  followInto(host, store, [verifier.state.revocationReader], {
    name: 'revocations',
    notReady: 'the revocation projection is catching up with the event log',
    // Rotations and revocations before the keys still usable cannot reject a token: skip them.
    startAfter: () => revocationRebuildAfter(store, epochSeconds(host.clock)),
  });
  // A key published a moment ago may not have reached the follower yet: read its stream.
  verifier.useKeyRefresh(
    createKeyRefresh(
      async () => {
        for (const { event } of await store.readStream(streams.signingKeys())) {
          if (isEventOf(signingKeyEventTypes, event)) verifier.state.keys.apply(event);
        }
      },
      { cooldownMs: 1_000, now: () => host.clock.now() },
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
  // TLS and SASL from TESSERA_KAFKA_*, files read now: a missing CA or password file stops the start.
  const security = kafkaSecurityOf(config);
  let kafka: Awaited<ReturnType<typeof startKafkaRevocations>> | undefined;
  let waitingFor = `Kafka topic ${config.TESSERA_KAFKA_TOPIC}`;
  const closing = new AbortController();
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
  if (jwksUrl) verifier.useKeyRefresh(createKeyRefresh(() => loadJwks(jwksUrl, verifier.state.keys), { cooldownMs: 5_000, now: () => host.clock.now() }));
  host.onClose(async () => {
    closing.abort();
    await kafka?.close();
  });
  // How far the projection is behind the topic; 0 until the consumer runs (/readyz says why it does not).
  const lagOf = async () => (kafka === undefined ? { pendingEvents: 0, behindSince: undefined } : kafka.consumer.lag());
  registerGauges(host.metrics, {
    tessera_kafka_verifier_pending_events: { help: 'Events on the revocation topic this Kafka-fed verifier has not applied yet', read: async () => (await lagOf()).pendingEvents },
    tessera_kafka_verifier_lag_seconds: {
      help: 'While events wait on the revocation topic: seconds since the newest event this Kafka-fed verifier applied was recorded (0 when none waits)',
      read: async () => {
        const { behindSince } = await lagOf();
        return behindSince === undefined ? 0 : Math.max(0, host.clock.now() - behindSince) / 1000;
      },
    },
  });
  host.readiness.add('kafka', () =>
    kafka === undefined
      ? `waiting for ${waitingFor}`
      : kafka.consumer.isReady()
        ? undefined
        : 'the revocation consumer is catching up with Kafka',
  );
  /**
   * A broker that is down, a topic not made yet or a group coordinator still loading (a fresh
   * broker's first group) is waited out, with the cause on /readyz, as the store guard waits for
   * the store: a supervisor restarting a verifier that exits would only hammer the same missing
   * topic. Anything else (a refusal, a bad JWKS answer, a bug) still ends the start.
   * Logged once at first, then every half minute.
   */
  const connecting = new Retry({ backoff: { initialMs: 2_000, maxMs: 2_000 }, clock: host.clock, log: { logger: log, failing: 'revocation topic not available yet; retrying', every: 15 } });
  const connect = async (): Promise<void> => {
    await connecting.run(
      async () => {
        try {
          kafka = await startKafkaRevocations(config, security, verifier.state.keys, log);
          await kafka.consumer.ready;
        } catch (error) {
          if (error instanceof FeedUnavailable) waitingFor = `Kafka (${error.message})`;
          throw error;
        }
      },
      { retryable: (error) => error instanceof FeedUnavailable, signal: closing.signal },
    );
  };
  host.untilReady(connect());
}

/** The verifier's routes (the plugin, forward-auth, the example protected routes) and its metrics. */
export function verifierRoutes(host: Host, verifier: VerifierParts): RouteRegistrar {
  host.onClose(async () => verifier.stopForgetting());
  registerGauges(host.metrics, {
    tessera_revocation_projection_entries: { help: 'Families the revocation projection currently holds', read: () => verifier.entries() },
  });
  return verifierRouteRegistrar(verifier, { trustedProxies: host.config.TESSERA_TRUSTED_PROXIES });
}

/** The verifier's routes alone: the plugin, forward-auth and the example protected routes. */
export function verifierRouteRegistrar(
  verifier: Pick<VerifierParts, 'bearer' | 'state'>,
  options: {
    /** TESSERA_TRUSTED_PROXIES: forward-auth believes the client's method and URL (for a DPoP proof) only from these peers. */
    readonly trustedProxies?: readonly string[] | undefined;
  } = {},
): RouteRegistrar {
  return async (app, listener, steps) => {
    // The example routes' DPoP proofs name the URL the client called: the request's protocol and
    // host, which fastify takes from X-Forwarded-Proto and -Host of a trusted proxy (TESSERA_TRUSTED_PROXIES).
    await app.register(tesseraAuth, { verifier: verifier.bearer, steps });
    await app.register(forwardAuthRoute, { verifier: verifier.bearer, trustedProxies: options.trustedProxies });
    // The app's JSON parser serves the charge route (a JSON body); the v1 GET has no body.
    await app.register(exampleRoutes, { accounts: verifier.state.accounts, v1: listener.v1, v5: listener.v5 });
  };
}
