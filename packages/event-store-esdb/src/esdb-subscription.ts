import { eventTypeFilter, excludeSystemEvents, type AllStreamResolvedEvent, type AllStreamSubscription, type Filter, type ReadPosition } from '@eventstore/db-client';
import type { TesseraEventType } from '@tessera/events';
import { EventStoreUnavailable, TimeSlices, type SubscribeOptions, type Subscription } from '@tessera/event-store';
import { eventTypeRegex, fromResolvedEvent, isAfter, toReadPosition, translateSubscriptionError } from './esdb-mapping.js';

export interface EsdbSubscriptionDeps {
  readonly options: SubscribeOptions;
  /** Opens the server's subscription (the client's subscribeToAll). */
  readonly open: (request: { fromPosition: ReadPosition; filter: Filter }) => AllStreamSubscription;
  /**
   * The newest event this subscription would deliver, for servers that send no CaughtUp
   * message (before 23.10); undefined when there is none.
   */
  readonly newestMatch: (types: readonly TesseraEventType[] | undefined) => Promise<bigint | undefined>;
  /** How long to wait for the server's CaughtUp before asking newestMatch (a read the newer servers never need). */
  readonly fallbackAfterMs: number;
  /** Told the position of every event delivered, so the store knows its head without asking. */
  readonly learn: (position: bigint) => void;
}

/** Pushed into the client's stream when the server says "caught up", so it sorts after every earlier event. */
const caughtUpMarker = Symbol('caughtUp');

/**
 * One server subscription, no reconnection: when the connection drops or the server ends the
 * call, the subscription ends with `onError(EventStoreUnavailable)` and `lastPosition()` is
 * exactly the last event handled, so the availability guard resubscribes `after` it and neither
 * loses nor repeats an event. An error of `onEvent` ends it too, reaching `onError` unchanged.
 * `caughtUp` resolves once caught up and rejects with the error that ended the subscription
 * before that; a rejection nobody awaits does not crash the process.
 */
export function createEsdbSubscription(deps: EsdbSubscriptionDeps): Subscription {
  const { types, onEvent, onError } = deps.options;
  let after = deps.options.after;
  let closed = false;
  let settled = false;
  let markCaughtUp!: () => void;
  let failCaughtUp!: (error: unknown) => void;
  const caughtUp = new Promise<void>((resolve, reject) => {
    markCaughtUp = () => {
      settled = true;
      resolve();
    };
    failCaughtUp = (error) => {
      settled = true;
      reject(error);
    };
  });
  caughtUp.catch(() => undefined);

  const filter = types && types.length > 0 ? eventTypeFilter({ regex: eventTypeRegex(types) }) : excludeSystemEvents();
  const stream = deps.open({ fromPosition: toReadPosition(after), filter });
  // The client re-emits gRPC errors on its stream. One that arrives after the loop below has
  // stopped (a late status of a call already given up on) must not be an uncaught 'error'; Node's
  // stream helpers happen to leave a handler behind today, which is not worth depending on.
  stream.on('error', () => undefined);

  /** Ends the subscription once, for whatever reason, and tells the subscriber. */
  const fail = (error: unknown): void => {
    if (closed) return;
    closed = true;
    if (!settled) failCaughtUp(error);
    stream.destroy();
    void stream.unsubscribe().catch(() => undefined);
    onError?.(error);
  };

  // The server's CaughtUp message (ESDB ≥ 23.10) is emitted by the client while earlier events
  // may still sit unconsumed in the stream's buffer; a marker pushed at that moment is read
  // only after them, so caughtUp resolves once they were all handed to onEvent.
  stream.on('caughtUp', () => {
    if (!closed && !stream.destroyed) stream.push(caughtUpMarker);
  });

  // Older servers send no CaughtUp: if none came in time, caught up once the newest matching
  // event (as of then) was handled. If that read fails first, the subscription fails rather
  // than hang; the events delivered meanwhile are counted, so resuming loses nothing.
  let target: bigint | undefined | null = null;
  const checkTarget = () => {
    if (settled || target === null) return;
    if (target === undefined || (after !== undefined && after >= target)) markCaughtUp();
  };
  const fallback = setTimeout(() => {
    if (settled || closed) return;
    deps.newestMatch(types).then(
      (newest) => {
        target = newest;
        checkTarget();
      },
      (error: unknown) => {
        if (!settled) fail(translateSubscriptionError(error));
      },
    );
  }, deps.fallbackAfterMs);
  fallback.unref();
  caughtUp.finally(() => clearTimeout(fallback)).catch(() => undefined);

  const slices = new TimeSlices();
  // The client's events, and the markers pushed above.
  const items: AsyncIterable<AllStreamResolvedEvent | typeof caughtUpMarker> = stream;
  const loop = (async () => {
    for await (const item of items) {
      if (closed) return;
      if (item === caughtUpMarker) {
        if (!settled) markCaughtUp();
        continue;
      }
      const position = item.event?.position.commit ?? item.commitPosition;
      if (position === undefined || !isAfter(position, after)) continue;
      const recorded = fromResolvedEvent(item, types);
      if (recorded) {
        try {
          // Most readers are synchronous: awaiting only real promises saves a microtask per event.
          const pending = onEvent(recorded);
          if (pending) await pending;
        } catch (error) {
          // Not handled, so not counted: a resubscribe after lastPosition() delivers it again.
          fail(error);
          return;
        }
        deps.learn(position);
      }
      after = position;
      checkTarget();
      // A stream that buffered a long backlog hands it over without a turn of the event loop: slice it.
      await slices.yieldIfDue();
    }
    if (!closed) throw new EventStoreUnavailable('EventStoreDB ended the subscription');
  })().catch((error: unknown) => {
    // After close() the stream is destroyed on purpose: that premature end is not a failure.
    if (!closed) fail(translateSubscriptionError(error));
  });

  return {
    caughtUp,
    lastPosition: () => after,
    close: async () => {
      clearTimeout(fallback);
      if (!closed) {
        closed = true;
        // Destroying the client's stream ends the loop; cancelling the call frees the server. The
        // cancel is not awaited: it waits for a channel, which a dead server may never give.
        stream.destroy();
        void stream.unsubscribe().catch(() => undefined);
      }
      await loop;
    },
  };
}
