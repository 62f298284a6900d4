import { EventStoreUnavailable, followLog, guardAvailability, type CommitStats, type EventStore, type GuardedEventStore, type LogReader, type ResilientSubscription } from '@tessera/event-store';
import type { Host } from './host.js';
import { instrumentEventStore, registerCounter, registerGauges } from './metrics.js';
import { traceEventStore } from './traced-store.js';

/**
 * The store TESSERA_EVENT_STORE names, timed for /metrics, traced, and guarded: a store that goes away
 * is an outage (503, /readyz names it, reconnect with backoff), not a crash. Closed last.
 */
export async function openGuardedStore(host: Host): Promise<GuardedEventStore> {
  const { config, log, metrics, readiness } = host;
  const opened = await host.openEventStore();
  countCommits(host, opened);
  const store = guardAvailability(traceEventStore(instrumentEventStore(opened, metrics)), {
    clock: host.clock,
    scheduler: host.scheduler,
    onChange: (availability) =>
      availability.available
        ? log.info('event store available again')
        : log.error({ cause: availability.cause }, 'event store unavailable; token operations answer 503 until it is back'),
  });
  host.onClose(() => store.close());
  if (config.TESSERA_EVENT_STORE === undefined) host.warnDevelopmentDefault('signing keys and the embedded SQLite event store in the data folder');
  readiness.add('event store', () => {
    const availability = store.availability();
    return availability.available ? undefined : `event store unavailable: ${availability.cause}`;
  });
  registerGauges(metrics, {
    tessera_event_store_head_position: { help: 'Global position of the newest event in the log', read: async () => Number((await store.headPosition()) ?? 0n) },
    tessera_event_store_available: { help: '1 while the event store takes appends, 0 during an outage', read: () => (store.availability().available ? 1 : 0) },
  });
  return store;
}

/**
 * Group commit, seen from /metrics: how many commits, how many appends they carried (the group
 * size is their ratio), the writer thread's time from BEGIN to COMMIT (fsync included), and the
 * time from handing a batch to the thread to its answer (the hop plus the commit).
 */
function countCommits(host: Host, store: EventStore): void {
  // Only a group-committing store (the embedded SQLite one) has these totals.
  const totals = store.commitStats?.bind(store);
  if (totals === undefined) return;
  const read = (): CommitStats => totals();
  registerCounter(host.metrics, 'tessera_event_store_commits_total', 'Durable commits (group commits) made by the SQLite writer thread', () => read().commits);
  registerCounter(host.metrics, 'tessera_event_store_committed_appends_total', 'Appends carried by those commits: divided by tessera_event_store_commits_total, the group size', () => read().appends);
  registerCounter(host.metrics, 'tessera_event_store_commit_seconds_total', "The SQLite writer thread's time from BEGIN to COMMIT, fsync included", () => read().commitSeconds);
  registerCounter(
    host.metrics,
    'tessera_event_store_commit_round_trip_seconds_total',
    'From handing a batch to the SQLite writer thread to its answer: the hop there and back, and the commit',
    () => read().roundTripSeconds,
  );
}

export interface Follower {
  /** Resolves once the read models have caught up with the log the first time. */
  readonly whenCaughtUp: Promise<void>;
  /** Open and caught up since the last (re)connection. */
  readonly live: () => boolean;
  readonly lastPosition: () => bigint | undefined;
}

/**
 * Follows the log into read models, with readiness, start-up and shutdown wired into the host.
 * Where to start may itself need the store (the revocation window), so it is asked for only
 * when the follower starts, waiting out an outage.
 */
export function followInto(
  host: Host,
  store: GuardedEventStore,
  readers: LogReader[],
  options: {
    readonly name: string;
    readonly notReady: string;
    readonly startAfter?: () => Promise<bigint | undefined>;
    /**
     * This follower feeds the process's read models (one per process): it fulfils `host.readModels`
     * and publishes its position as tessera_projection_last_applied_position.
     */
    readonly readModels?: boolean;
  },
): Follower {
  let subscription: ResilientSubscription | undefined;
  let closed = false;
  // Only a read model that throws on an event gets here (dropped connections are retried by the guard).
  const onError = (error: unknown) => host.fatal(error, 'a read model failed to apply an event');
  const startAfter = options.startAfter;
  const whenCaughtUp = (startAfter ? untilAvailable(store, startAfter) : Promise.resolve(undefined)).then(async (after) => {
    if (closed) return;
    subscription = followLog(store, readers, onError, { after });
    await subscription.caughtUp;
  });
  host.onClose(async () => {
    closed = true;
    await subscription?.close();
  });
  host.readiness.add(options.name, () => (subscription?.live() ? undefined : options.notReady));
  host.untilReady(whenCaughtUp);
  const follower: Follower = { whenCaughtUp, live: () => subscription?.live() ?? false, lastPosition: () => subscription?.lastPosition() };
  if (options.readModels) {
    host.readModels.follow(follower);
    registerGauges(host.metrics, {
      tessera_projection_last_applied_position: {
        help: 'Global position of the last event of a followed type this process applied (events of other types are not counted, so compare with care)',
        read: () => Number(subscription?.lastPosition() ?? 0n),
      },
    });
  }
  return follower;
}

/**
 * Runs a start-up step that needs the store, waiting out an outage instead of failing the start:
 * the process listens and says why it is not ready meanwhile. Other errors still fail the start.
 */
export async function untilAvailable<T>(store: GuardedEventStore, step: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof EventStoreUnavailable)) throw error;
      await store.whenAvailable();
    }
  }
}
