import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { TesseraConfig } from '@tessera/config';
import { streams, type SigningKeyEvent } from '@tessera/contracts';
import { EventStoreUnavailable, guardAvailability, type GuardedEventStore } from '@tessera/event-store';
import { createKeyRefresh } from '@tessera/verification';
import { buildApp } from './app.js';
import { ownerOnlyDataFolder } from './data-folder.js';
import { openEventStore } from './event-store-factory.js';
import { loadJwks, startKafkaRevocations, startRelay } from './kafka-wiring.js';
import { loggerOptions } from './logger.js';
import { createMetrics, instrumentEventStore, registerGauges } from './metrics.js';
import { revocationRebuildAfter } from './revocation-window.js';
import { createIssuerParts, createVerifierParts, nowSeconds, startFollowing, type IssuerParts, type VerifierParts } from './runtime.js';
import { listenOrExplain } from './listen.js';
import { createReadiness } from './readiness.js';
import { loadTlsMaterial } from './tls.js';

export interface RunningServer {
  /** One URL per listener: the v5 one first, then the v1 one when TESSERA_LEGACY_PORT is set. */
  readonly urls: string[];
  readonly whenReady: Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Where JSON log lines go (default stdout). Tests capture it to prove no secret is logged. */
  readonly logStream?: NodeJS.WritableStream;
}

export type Role = 'all-in-one' | 'issuer' | 'verifier' | 'relay';

/**
 * Starts one process: the all-in-one (issuer + verifier, plus the relay when Kafka is
 * configured), or one service alone. Each follows its sources into memory and reports ready
 * once caught up; until then only health, readiness and metrics answer.
 */
export async function startServer(config: TesseraConfig, role: Role, options: StartOptions = {}): Promise<RunningServer> {
  const log = pino({ ...(loggerOptions(config.TESSERA_LOG_LEVEL) as object), name: `tessera-${role}` }, options.logStream ?? process.stdout);
  const metrics = createMetrics();
  const closers: (() => Promise<void>)[] = [];
  const readiness = createReadiness();
  const pending: Promise<unknown>[] = [];
  let closing: Promise<void> | undefined;
  ownerOnlyDataFolder(config.TESSERA_DATA_DIR);

  // A Kafka-fed verifier reads no log at all: that is what lets it run in another region.
  const kafkaFedVerifier = role === 'verifier' && config.TESSERA_VERIFIER_SOURCE === 'kafka';
  let store: GuardedEventStore | undefined;
  if (!kafkaFedVerifier) {
    // A store that goes away is an outage (503, /readyz names it, reconnect with backoff), not a crash.
    store = guardAvailability(instrumentEventStore(openEventStore(config), metrics), {
      onChange: (availability) =>
        availability.available
          ? log.info('event store available again')
          : log.error({ cause: availability.cause }, 'event store unavailable; token operations answer 503 until it is back'),
    });
    const opened = store;
    readiness.add('event store', () => {
      const availability = opened.availability();
      return availability.available ? undefined : `event store unavailable: ${availability.cause}`;
    });
    registerGauges(metrics, {
      tessera_event_store_head_position: { help: 'Global position of the newest event in the log', read: async () => Number((await opened.headPosition()) ?? 0n) },
      tessera_event_store_available: { help: '1 while the event store takes appends, 0 during an outage', read: () => (opened.availability().available ? 1 : 0) },
    });
  }

  const verifier: VerifierParts | undefined = role === 'all-in-one' || role === 'verifier' ? createVerifierParts(config) : undefined;
  const issuer: IssuerParts | undefined =
    (role === 'all-in-one' || role === 'issuer') && store
      ? createIssuerParts(config, store, {
          onFamilyEvent: verifier?.state.applyFamilyEvent,
          shared: verifier && { directory: verifier.state.accounts, keys: verifier.state.keys },
        })
      : undefined;

  // Only a read model that throws on an event gets here (dropped connections are retried by the
  // guard): that is a bug no retry fixes, so the process stops for its supervisor to see.
  const onLogError = (error: unknown) => {
    log.fatal({ err: error }, 'a read model failed to apply an event; exiting so a supervisor restarts this process');
    void closeAll().finally(() => process.exit(1));
  };
  if (store && (issuer || verifier)) {
    const readers = [...(issuer?.readers ?? []), ...(verifier?.state.readers ?? [])];
    const following = startFollowing(store, readers, onLogError);
    closers.push(() => following.close());
    readiness.add('read models', () => (following.live() ? undefined : 'read models are catching up with the event log'));
    pending.push(following.whenCaughtUp);
    registerGauges(metrics, {
      tessera_projection_last_applied_position: {
        help: 'Global position of the last event of a followed type this process applied (events of other types are not counted, so compare with care)',
        read: () => Number(following.lastPosition() ?? 0n),
      },
    });
  }
  if (store && verifier && !kafkaFedVerifier) {
    const opened = store;
    // Rotations and revocations before the keys still usable cannot reject a token (decision 0008): skip them.
    const revocations = startFollowing(store, [verifier.state.revocationReader], onLogError, () =>
      untilAvailable(opened, () => revocationRebuildAfter(opened, nowSeconds())),
    );
    // A key published a moment ago may not have reached the follower yet: read its stream.
    verifier.useKeyRefresh(
      createKeyRefresh(
        async () => {
          for (const { event } of await opened.readStream(streams.signingKeys())) verifier.state.keys.apply(event as SigningKeyEvent);
        },
        { cooldownMs: 1_000 },
      ),
    );
    closers.push(() => revocations.close());
    readiness.add('revocations', () => (revocations.live() ? undefined : 'the revocation projection is catching up with the event log'));
    pending.push(revocations.whenCaughtUp);
  }

  if (kafkaFedVerifier && verifier) {
    const kafka = await startKafkaRevocations(config, verifier.state.keys, log);
    verifier.useRevocationSource(kafka.consumer);
    const jwksUrl = config.TESSERA_ISSUER_JWKS_URL;
    // Key events travel on the topic too; the JWKS covers the moment before they arrive.
    if (jwksUrl) verifier.useKeyRefresh(createKeyRefresh(() => loadJwks(jwksUrl, verifier.state.keys), { cooldownMs: 5_000 }));
    closers.push(kafka.close);
    readiness.add('kafka', () => (kafka.consumer.isReady() ? undefined : 'the revocation consumer is catching up with Kafka'));
    pending.push(kafka.consumer.ready);
  }

  if (issuer && store) {
    const opened = store;
    // Ready only while the keyring can sign: a key retired from another host makes the issuer
    // unready until keepKey has published its replacement.
    readiness.add('signing key', () => (issuer.keyring.ready ? undefined : 'the issuer has no usable signing key'));
    pending.push(
      Promise.all(pending).then(async () => {
        const published = await untilAvailable(opened, () => issuer.keyring.ensureKey(opened, nowSeconds()));
        // This process's key sets learn a new key at once rather than on the next log poll.
        if (published) issuer.keys.apply(published);
        const stopKeeping = issuer.keyring.keepKey(opened, {
          now: nowSeconds,
          onPublished: (event) => {
            issuer.keys.apply(event);
            log.info({ kid: event.kid }, 'published a new signing key: the one this issuer signed with was retired');
          },
          onError: (error) => log.error({ err: error }, 'could not publish a new signing key; retrying'),
        });
        closers.push(async () => stopKeeping());
      }),
    );
  }

  if (store && config.TESSERA_KAFKA_BROKERS && (role === 'relay' || role === 'all-in-one')) {
    const { relay, close } = await startRelay(config, store, log);
    closers.unshift(close);
    registerGauges(metrics, {
      tessera_relay_pending_events: { help: 'Events read from the log and not yet acknowledged by Kafka', read: async () => (await relay.lag()).pendingEvents },
      tessera_relay_oldest_pending_seconds: {
        help: 'Age of the oldest event not yet acknowledged by Kafka: the figure to alert on',
        read: async () => (await relay.lag()).oldestPendingMs / 1000,
      },
      tessera_relay_published_total: { help: 'Events acknowledged by Kafka since start', read: () => relay.published() },
    });
  } else if (role === 'relay') {
    throw new Error('the relay needs TESSERA_KAFKA_BROKERS');
  }

  const isReady = readiness.isReady;
  registerGauges(metrics, {
    tessera_ready: { help: '1 while /readyz answers 200: store available, projections caught up, signing key and listeners in place', read: () => (isReady() ? 1 : 0) },
    ...(verifier ? { tessera_revocation_projection_entries: { help: 'Families the revocation projection currently holds', read: () => verifier.entries() } } : {}),
  });

  const tls = await loadTlsMaterial(config);
  const developmentDefaults = [
    ...(tls.selfSigned ? ['a self-signed TLS certificate'] : []),
    ...(store && config.TESSERA_EVENT_STORE === undefined ? ['signing keys and the embedded SQLite event store in the data folder'] : []),
  ];
  if (developmentDefaults.length > 0) {
    log.warn({ dataDir: config.TESSERA_DATA_DIR }, `development-only defaults in use: ${developmentDefaults.join(', ')}`);
  }
  const legacyApart = config.TESSERA_LEGACY_PORT !== undefined && role !== 'relay';
  const appFor = (v5: boolean, v1: boolean) =>
    buildApp({
      tls,
      logLevel: config.TESSERA_LOG_LEVEL,
      logStream: options.logStream,
      readiness,
      metrics,
      issuer: issuer && { tokens: issuer.tokens, jwks: () => issuer.keys.jwks(nowSeconds()), v5, v1 },
      verifier: verifier && { state: verifier.state, bearer: verifier.bearer, v5, v1 },
    });
  const apps: FastifyInstance[] = [await appFor(true, !legacyApart)];
  if (legacyApart) apps.push(await appFor(false, true));
  const listeners = legacyApart
    ? [
        { variable: 'TESSERA_PORT', port: config.TESSERA_PORT },
        { variable: 'TESSERA_LEGACY_PORT', port: config.TESSERA_LEGACY_PORT! },
      ]
    : [{ variable: 'TESSERA_PORT', port: config.TESSERA_PORT }];
  // Not ready until every listener is up: a process that has half its ports must never look healthy.
  let listening = false;
  readiness.add('listeners', () => (listening ? undefined : 'not every listener is open yet'));
  const urls: string[] = [];
  try {
    for (const [index, app] of apps.entries()) {
      const address = await listenOrExplain(app, { host: config.TESSERA_HOST, ...listeners[index]! });
      urls.push(address.replace('://127.0.0.1', '://localhost').replace('://[::1]', '://localhost'));
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  listening = true;
  log.info({ urls, role }, 'tessera listening');
  const whenReady = Promise.all(pending).then(() => undefined);
  whenReady.then(
    () => log.info({ role }, 'ready: projections caught up'),
    (error: unknown) => {
      log.fatal({ err: error }, 'could not become ready');
      void closeAll().finally(() => process.exit(1));
    },
  );

  async function closeAll(): Promise<void> {
    closing ??= (async () => {
      // Stop accepting, let in-flight requests finish (their appends are awaited), then release the sources.
      await Promise.all(apps.map((app) => app.close()));
      verifier?.stopForgetting();
      for (const close of closers) await settle(close);
      if (store) await settle(() => store.close());
    })();
    return closing;
  }
  return { urls, whenReady, close: closeAll };
}

/**
 * Runs a start-up step that needs the store, waiting out an outage instead of failing the start:
 * the process listens and says why it is not ready meanwhile. Other errors still fail the start.
 */
async function untilAvailable<T>(store: GuardedEventStore, step: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof EventStoreUnavailable)) throw error;
      await store.whenAvailable();
    }
  }
}

async function settle(step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch {
    // A source that fails to close must not stop the others from closing.
  }
}
