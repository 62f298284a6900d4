import type { RecordedEvent } from '@tessera/events';
import { Retry, systemClock, systemScheduler, type Cancel, type Clock, type Scheduler } from '@tessera/timing';
import { EventStoreUnavailable, type EventStore, type SubscribeOptions, type Subscription } from './event-store.js';
import { CodedError } from '@tessera/contracts';

/** Whether the store can take an append now, and if not, why (for /readyz and the logs). */
export type Availability = { readonly available: true } | { readonly available: false; readonly cause: string; readonly sinceMs: number };

export interface AvailabilityOptions {
  /** First wait before a probe or a resubscribe; doubles on each failure up to maxBackoffMs. */
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Told of every change, so the process can log "lost the store" and "store is back" once each. */
  readonly onChange?: (availability: Availability) => void;
  readonly clock?: Clock;
  /** Where the probes and the reopens wait; default the machine's timers (which keep no process alive). */
  readonly scheduler?: Scheduler;
}

/** A subscription that outlives the connection it started on. */
export interface ResilientSubscription extends Subscription {
  /** True while a subscription is open and has caught up since it was (re)opened. */
  readonly live: () => boolean;
}

export interface GuardedEventStore extends EventStore {
  availability(): Availability;
  subscribeToAll(options: SubscribeOptions): ResilientSubscription;
  /** Resolves once the store is available (at once when it is); rejects when the store is closed. */
  whenAvailable(): Promise<void>;
}

/** Raised inside the guard to tell a subscriber's own failure (a bug: fatal) from the store's (retried). */
class SubscriberFailure extends CodedError {
  readonly code = 'ERR_SUBSCRIBER_FAILED';
  constructor(readonly original: unknown) {
    super('the subscriber failed');
  }
}

/**
 * Wraps any adapter so that a store that goes away is an outage, not a crash:
 * - an append or read that fails with EventStoreUnavailable marks the store unavailable;
 * - while unavailable, appends fail at once (a client gets its 503 without waiting on a dead
 *   store) and `probe()` runs with capped exponential backoff until the store answers;
 * - a subscription whose connection drops is reopened from its last position with the same
 *   backoff, so a projection neither loses nor repeats an event.
 * Errors thrown by a subscriber itself are not retried: they reach `onError` as before.
 */
export function guardAvailability(store: EventStore, options: AvailabilityOptions = {}): GuardedEventStore {
  const backoff = { initialMs: options.minBackoffMs ?? 250, maxMs: options.maxBackoffMs ?? 5_000 };
  const clock = options.clock ?? systemClock;
  const scheduler = options.scheduler ?? systemScheduler;
  let state: Availability = { available: true };
  let cancelProbe: Cancel | undefined;
  /** Probes while the store is down; the outage itself is logged once each way, through onChange. */
  const probing = new Retry({ backoff, clock });
  let closed = false;
  const waiters = new Set<{ resolve: () => void; reject: (error: unknown) => void }>();

  const change = (next: Availability) => {
    state = next;
    options.onChange?.(next);
    if (next.available) {
      for (const waiter of waiters) waiter.resolve();
      waiters.clear();
    }
  };

  function markUnavailable(cause: string): void {
    if (closed) return;
    if (state.available) change({ available: false, cause, sinceMs: clock.now() });
    scheduleProbe(cause);
  }

  function markAvailable(): void {
    probing.succeeded();
    if (!state.available) change({ available: true });
  }

  function scheduleProbe(cause: unknown): void {
    if (cancelProbe || closed) return;
    cancelProbe = scheduler.after(probing.failed(cause), () => {
      cancelProbe = undefined;
      store.probe().then(markAvailable, (error: unknown) => {
        if (!state.available) state = { ...state, cause: describe(error) };
        scheduleProbe(error);
      });
    });
  }

  /** Runs a store call, noting an outage it reveals; other errors pass through untouched. */
  async function watched<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof EventStoreUnavailable) markUnavailable(error.message);
      throw error;
    }
  }

  function subscribeResiliently(subscribe: SubscribeOptions): ResilientSubscription {
    let after = subscribe.after;
    let current: Subscription | undefined;
    let live = false;
    let stopped = false;
    let cancelReopen: Cancel | undefined;
    const reopening = new Retry({ backoff, clock });
    let markCaughtUp!: () => void;
    const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

    // Wrapping every delivery costs a closure call per event; it keeps the subscriber's errors
    // apart from the store's without a try/catch on the adapters' hot loops.
    const onEvent = (recorded: RecordedEvent): void | Promise<void> => {
      let pending: void | Promise<void>;
      try {
        pending = subscribe.onEvent(recorded);
      } catch (error) {
        throw new SubscriberFailure(error);
      }
      if (pending) {
        return pending.catch((error: unknown) => {
          throw new SubscriberFailure(error);
        });
      }
    };

    const scheduleReopen = (cause: string) => {
      markUnavailable(`subscription lost: ${cause}`);
      cancelReopen = scheduler.after(reopening.failed(cause), () => {
        cancelReopen = undefined;
        open();
      });
    };

    const open = (): void => {
      if (stopped || closed) return;
      let opened: Subscription;
      try {
        opened = store.subscribeToAll({
          ...(after === undefined ? {} : { after }),
          ...(subscribe.types ? { types: subscribe.types } : {}),
          onEvent,
          onError: (error) => {
            if (current !== opened) return;
            after = opened.lastPosition() ?? after;
            live = false;
            current = undefined;
            if (error instanceof SubscriberFailure) {
              stopped = true;
              subscribe.onError?.(error.original);
              return;
            }
            // The connection dropped (or the store failed a read): reopen from where we were.
            scheduleReopen(describe(error));
          },
        });
      } catch (error) {
        // An adapter may refuse at once (a closed client): that is an outage like any other.
        scheduleReopen(describe(error));
        return;
      }
      current = opened;
      opened.caughtUp.then(
        () => {
          if (current !== opened) return;
          live = true;
          reopening.succeeded();
          markCaughtUp();
        },
        // A failed catch-up is reported through onError as well; that path reopens.
        () => undefined,
      );
    };
    open();

    return {
      caughtUp,
      live: () => live && !stopped,
      lastPosition: () => current?.lastPosition() ?? after,
      close: async () => {
        stopped = true;
        live = false;
        cancelReopen?.();
        const closing = current;
        current = undefined;
        await closing?.close();
      },
    };
  }

  return {
    availability: () => state,
    whenAvailable: () => {
      if (closed) return Promise.reject(new EventStoreUnavailable('event store is closed'));
      if (state.available) return Promise.resolve();
      return new Promise<void>((resolve, reject) => waiters.add({ resolve, reject }));
    },
    append: (stream, events, appendOptions) => {
      // Fail fast while the store is known to be down: the probe, not each client, finds the recovery.
      if (!state.available) return Promise.reject(new EventStoreUnavailable(`the event store is unavailable: ${state.cause}`));
      return watched(() => store.append(stream, events, appendOptions));
    },
    readStream: (stream, readOptions) => watched(() => store.readStream(stream, readOptions)),
    readAll: (readOptions) => watched(() => store.readAll(readOptions)),
    subscribeToAll: subscribeResiliently,
    headPosition: () => watched(() => store.headPosition()),
    positionBefore: (epochMs) => watched(() => store.positionBefore(epochMs)),
    probe: () => watched(() => store.probe()).then(markAvailable),
    close: async () => {
      closed = true;
      cancelProbe?.();
      for (const waiter of waiters) waiter.reject(new EventStoreUnavailable('event store is closed'));
      waiters.clear();
      await store.close();
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
