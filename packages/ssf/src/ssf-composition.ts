import { join } from 'node:path';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { publicUrlOf } from '@tessera/config';
import { egressPolicy } from '@tessera/egress';
import type { AdminScope } from '@tessera/events';
import type { GuardedEventStore, LogReader } from '@tessera/event-store';
import { epochSeconds, untilAvailable, type Host } from '@tessera/host';
import type { AdminRouteRegistrar, RouteRegistrar } from '@tessera/server';
import type { SecretHashers } from '@tessera/tokens';
import { createFileCheckpoints } from './delivery/delivery-checkpoints.js';
import { firstEventHorizon } from './delivery/retention.js';
import { Transmitter } from './delivery/transmitter.js';
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
 * read models, its routes, and its delivery from a durable checkpoint per stream in the data folder
 * (ssf-checkpoints.json), started once the process's read models (the keyring's keys among them)
 * have caught up with the log and a stream exists, and stopped before the store closes.
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
  const transmitter: Transmitter = new Transmitter({
    store,
    keyring: parts.keyring,
    seal,
    issuer,
    checkpoints: createFileCheckpoints(join(config.TESSERA_DATA_DIR, 'ssf-checkpoints.json'), (error) => logger.error({ err: error }, 'could not save the Shared Signals checkpoints; retrying with the next')),
    retention: firstEventHorizon(store),
    clock: host.clock,
    scheduler: host.scheduler,
    logger,
    pushTimeoutMs: config.TESSERA_SSF_PUSH_TIMEOUT * 1000,
    egress,
    pauseAfterMs: config.TESSERA_SSF_PAUSE_AFTER * 1000,
    now,
    counters: registerSsfMetrics(host.metrics, (): Transmitter => transmitter),
  });
  // Started once the read models have caught up and a stream exists; stopped once, before the store closes.
  let closed = false;
  let starting: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= transmitter.stop());
  host.onClose(async () => {
    closed = true;
    await starting?.catch(() => undefined);
    if (starting) await stop();
  });
  // Not before a stream exists: a deployment without receivers pays no subscription to the log
  // (each append would wake it) for a transmitter with nothing to send.
  Promise.all([host.readModels.caughtUp, directory.whenAnyStream]).then(
    async () => {
      if (closed) return;
      starting = untilAvailable(store, () => transmitter.start());
      await starting;
      if (closed) await stop();
    },
    () => undefined,
  ).catch((error: unknown) => host.fatal(error, 'the Shared Signals transmitter could not start'));
  return {
    routes: async (app) => streamRoutes(app, { issuer, issuerAtStart, receivers, management, transmitter, pollWaitMs: config.TESSERA_SSF_POLL_WAIT * 1000 }),
    adminRoutes: async (app) => receiverAdminRoutes(app, { store, hashers: parts.hashers, now, requireScope: parts.requireScope, adminTokenIdOf: parts.adminTokenIdOf }),
    readers: [receivers.reader, directory.reader],
    anyStream: () => directory.anyStream,
  };
}
