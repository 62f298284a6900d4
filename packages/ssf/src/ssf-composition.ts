import { join } from 'node:path';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { publicUrlOf } from '@tessera/config';
import { egressPolicy } from '@tessera/egress';
import type { AdminScope } from '@tessera/events';
import { ExpectedRevisionConflict, type GuardedEventStore, type LogReader } from '@tessera/event-store';
import { epochSeconds, untilAvailable, type Host } from '@tessera/host';
import type { AdminRouteRegistrar, RouteRegistrar } from '@tessera/server';
import type { SecretHashers } from '@tessera/tokens';
import { DeliveryLease } from './delivery/delivery-lease.js';
import { LogCheckpoints, loadDeliverySnapshot } from './delivery/log-checkpoints.js';
import { certificateSha256Of, defaultReplicaId, defaultReplicaUrl } from './delivery/replica-identity.js';
import { firstEventHorizon } from './delivery/retention.js';
import { Transmitter } from './delivery/transmitter.js';
import { createDeliveryForwarding } from './delivery-forwarder.js';
import { ReceiverDirectory } from './receiver-directory.js';
import { receiverAdminRoutes } from './receiver-admin-routes.js';
import { createHeaderSeal } from './sealed-header.js';
import type { SetKeyring } from './set-signer.js';
import { registerSsfMetrics } from './ssf-metrics.js';
import { StreamDirectory } from './stream-directory.js';
import { createStreamManagement } from './stream-management.js';
import { streamRoutes } from './stream-routes.js';

export interface SharedSignalsParts {
  /** The issuer's signing keyring: SETs are signed with a key of the published JWKS. */
  readonly keyring: SetKeyring;
  /** The process's secret-hashing keys: receivers' token hashes and sealed push headers name the key that made them. */
  readonly hashers: SecretHashers;
  /** The admin API's guard, for the receivers' admin routes (scope ssf:receivers). */
  readonly requireScope: (scope: AdminScope) => onRequestAsyncHookHandler;
  readonly adminTokenIdOf: (request: FastifyRequest) => string;
}

export interface SharedSignals {
  /** The metadata, stream management and polling, for the public listener. */
  readonly routes: RouteRegistrar;
  /** The receivers' admin routes, for the admin listener. */
  readonly adminRoutes: AdminRouteRegistrar;
  /** The receiver and stream read models, for the process's own follower of the log. */
  readonly readers: readonly LogReader[];
  /**
   * True once a stream exists: the region module records other regions' revocations for this
   * region's receivers only then (with none, no receiver would get them).
   */
  readonly anyStream: () => boolean;
}

/**
 * Wires the Shared Signals transmitter into a process (the all-in-one, or `tessera issuer`): its
 * read models, its routes, and its delivery. Delivery runs in one replica of the deployment at a
 * time, the holder of the lease in the log (`ssfdelivery`, docs/decisions/0029), from the
 * checkpoint recorded there; the lease is contended for once the process's read models (the
 * keyring's keys among them) have caught up with the log and a stream exists, and released before
 * the store closes. Other replicas forward polls and status reads to the holder.
 * Its issuer is TESSERA_PUBLIC_URL (by default the public listener's address, as bound).
 */
export function wireSharedSignals(host: Host, store: GuardedEventStore, parts: SharedSignalsParts): SharedSignals {
  const { config, log } = host;
  // Read when used, not now: with TESSERA_PORT=0 the default names the port the listener binds later.
  const issuer = () => publicUrlOf(config, host.listeners.ports().public);
  // Known now unless the default issuer waits for a port the system will choose (TESSERA_PORT=0).
  const issuerAtStart = config.TESSERA_PUBLIC_URL !== undefined || config.TESSERA_PORT !== 0 ? publicUrlOf(config) : undefined;
  const seal = createHeaderSeal(parts.hashers);
  const allowHttpPush = config.TESSERA_SSF_ALLOW_HTTP_PUSH === 'true';
  // Push endpoints are URLs receivers chose: the same egress policy as every other such URL.
  const egress = { policy: egressPolicy(config), allowHttp: allowHttpPush };
  if (allowHttpPush) host.warnDevelopmentDefault('TESSERA_SSF_ALLOW_HTTP_PUSH=true: Shared Signals streams may push SETs over plain http, readable and forgeable on the way (development only)');
  const now = () => epochSeconds(host.clock);
  const receivers = new ReceiverDirectory(parts.hashers);
  const directory = new StreamDirectory();
  const management = createStreamManagement({
    store,
    directory,
    seal,
    issuer,
    egress,
    now,
    scopeOf: (receiverId) => receivers.scopeOf(receiverId),
    maxStreamsPerReceiver: config.TESSERA_SSF_MAX_STREAMS_PER_RECEIVER,
    minVerificationIntervalSeconds: config.TESSERA_SSF_MIN_VERIFICATION_INTERVAL,
  });
  const logger = log.child({ component: 'ssf' });
  const counters = registerSsfMetrics(host.metrics, () => delivering?.transmitter);
  // Local monotonic time: the lease only ever compares durations this machine measured itself.
  const monotonic = { now: () => performance.now() };
  const ttlMs = config.TESSERA_SSF_LEASE_TTL * 1000;
  const legacyCheckpointFile = join(config.TESSERA_DATA_DIR, 'ssf-checkpoints.json');
  const refreshEveryMs = Math.min(10 * 60_000, (config.TESSERA_HOT_RETENTION * 1000) / 2);
  // The certificate the public listener serves: named in the lease, so the other replicas pin it.
  const servedCertificateFile = config.TESSERA_TLS_CERT ?? join(config.TESSERA_DATA_DIR, 'tls', 'self-signed.crt');
  let servedCertificateSha256: string | undefined;

  /** The delivery of the lease's current holding: made when the lease is taken, stopped when it is lost. */
  let delivering: { readonly transmitter: Transmitter; readonly checkpoints: LogCheckpoints } | undefined;
  let closed = false;
  // Starts and stops one after another: a lease lost while delivery is starting stops it once started.
  let transitions: Promise<void> = Promise.resolve();
  const startDelivery = async (): Promise<void> => {
    if (closed || !lease.holding) return;
    const snapshot = await untilAvailable(store, () => loadDeliverySnapshot(store, legacyCheckpointFile));
    if (closed || !lease.holding) return;
    const checkpoints: LogCheckpoints = new LogCheckpoints(snapshot, {
      append: (record) => lease.appendCheckpoint(record),
      snapshot: () => transmitter.deliverySnapshot(),
      scheduler: host.scheduler,
      monotonic,
      now,
      refreshEveryMs,
      onError: (error) => {
        // A conflict is the lease taken over: the lease stops this delivery, and says so itself.
        if (!(error instanceof ExpectedRevisionConflict)) logger.warn({ err: error }, 'could not record the Shared Signals checkpoint; retrying with the next');
      },
    });
    const transmitter: Transmitter = new Transmitter({
      store,
      keyring: parts.keyring,
      seal,
      issuer,
      checkpoints,
      retention: firstEventHorizon(store),
      clock: host.clock,
      scheduler: host.scheduler,
      logger,
      pushTimeoutMs: config.TESSERA_SSF_PUSH_TIMEOUT * 1000,
      egress,
      pauseAfterMs: config.TESSERA_SSF_PAUSE_AFTER * 1000,
      ackDeadlineMs: config.TESSERA_SSF_ACK_DEADLINE * 1000,
      emptyPollIntervalMs: config.TESSERA_SSF_EMPTY_POLL_INTERVAL * 1000,
      now,
      mayDeliver: () => lease.valid,
      counters: {
        ...counters,
        delivered: (streamId) => {
          counters.delivered(streamId);
          checkpoints.deliveredOne();
        },
        dropped: (streamId) => {
          counters.dropped(streamId);
          checkpoints.deliveredOne();
        },
      },
    });
    delivering = { transmitter, checkpoints };
    await untilAvailable(store, () => transmitter.start());
    // Where this holding starts, recorded at once: the newest checkpoint is never far behind the newest lease event.
    await checkpoints.flush();
    checkpoints.start();
  };
  const stopDelivery = async (): Promise<void> => {
    const stopping = delivering;
    delivering = undefined;
    // Its last checkpoint is recorded as it stops (refused, and harmless, when another replica took the lease).
    await stopping?.transmitter.stop();
  };
  const lease: DeliveryLease = new DeliveryLease({
    store,
    replica: config.TESSERA_REPLICA_ID ?? defaultReplicaId(config.TESSERA_KEYS_DIR ?? join(config.TESSERA_DATA_DIR, 'keys')),
    url: () => config.TESSERA_SSF_REPLICA_URL ?? defaultReplicaUrl(config.TESSERA_HOST, host.listeners.ports().public ?? config.TESSERA_PORT),
    certificateSha256: () => (servedCertificateSha256 ??= certificateSha256Of(servedCertificateFile)),
    ttlMs,
    monotonic,
    scheduler: host.scheduler,
    now,
    logger,
    onTaken: () => {
      transitions = transitions.then(startDelivery).catch((error: unknown) => host.fatal(error, 'the Shared Signals transmitter could not start'));
    },
    onLost: async () => {
      transitions = transitions.then(stopDelivery, stopDelivery);
      await transitions;
    },
  });
  const forwarding = createDeliveryForwarding({
    servesHere: () => lease.valid,
    holder: () => lease.holder,
    trustedCertificateFiles: [servedCertificateFile, ...(process.env.NODE_EXTRA_CA_CERTS ? [process.env.NODE_EXTRA_CA_CERTS] : [])],
  });
  let leaseStarted = false;
  host.onClose(async () => {
    closed = true;
    // Releases the lease once delivery has stopped and its last checkpoint is recorded: another replica takes over at once.
    if (leaseStarted) await lease.stop();
    await transitions.catch(() => undefined);
    await stopDelivery();
  });
  // Not before a stream exists: a deployment without receivers pays no lease (a renewal every
  // TTL/3) and no subscription to the log (each append would wake it) for nothing to send.
  Promise.all([host.readModels.caughtUp, directory.whenAnyStream]).then(
    () => {
      if (closed) return;
      leaseStarted = true;
      lease.start();
    },
    () => undefined,
  );
  return {
    routes: async (app) =>
      streamRoutes(app, { issuer, issuerAtStart, receivers, management, transmitter: { workerOf: (receiverId, streamId) => delivering?.transmitter.workerOf(receiverId, streamId) }, forwarding, pollWaitMs: config.TESSERA_SSF_POLL_WAIT * 1000 }),
    adminRoutes: async (app) =>
      receiverAdminRoutes(app, {
        store,
        hashers: parts.hashers,
        now,
        requireScope: parts.requireScope,
        adminTokenIdOf: parts.adminTokenIdOf,
        streamsOf: (receiverId) => directory.streamsOf(receiverId),
        deliveryOf: (receiverId, streamId) => delivering?.transmitter.workerOf(receiverId, streamId),
      }),
    readers: [receivers.reader, directory.reader],
    anyStream: () => directory.anyStream,
  };
}
