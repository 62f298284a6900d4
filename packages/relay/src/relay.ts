import { isPublishedRecord, type PublishedEvent, type PublishedEventType, type RecordedEvent } from '@tessera/events';
import { Wakeup, type EventStore, type Subscription } from '@tessera/event-store';
import { consoleLogger, feedEventTypes, type FeedLogger, type RevocationFeed } from '@tessera/feed';
import { Retry, systemClock, type Clock } from '@tessera/timing';
import type { RelayCheckpoint } from './relay-checkpoint.js';

/** The event loop's next turn: every promise callback queued before it has run. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface RelayOptions {
  readonly store: EventStore;
  readonly feed: RevocationFeed;
  readonly checkpoint: RelayCheckpoint;
  /** The event types this relay carries, published ones only; default the revocation feed's (feedEventTypes). */
  readonly types?: readonly PublishedEventType[];
  readonly logger?: FeedLogger;
  /** Most events in one publish; also how many the relay buffers before it stops reading the log. */
  readonly batchSize?: number;
  /** Backoff between publish attempts while the feed is down. */
  readonly retryInitialMs?: number;
  readonly retryMaxMs?: number;
  /** On stop, how long to keep trying to publish what was read; the rest is republished on the next start. */
  readonly stopFlushTimeoutMs?: number;
  /**
   * Readies the feed (creates the topic when absent). Run from start() in the background and
   * retried with the publish backoff until it succeeds, and nothing is published before: a broker
   * that is down when the process starts delays the relay, never the process it runs in.
   */
  readonly prepareFeed?: () => Promise<void>;
  readonly clock?: Clock;
}

export interface RelayLag {
  /** Every event at or before it has been acknowledged by the feed. */
  readonly checkpoint: bigint | undefined;
  /** Newest position in the log. */
  readonly head: bigint | undefined;
  /**
   * head − checkpoint when events are pending, else head − the last position read. Positions count
   * events of every type, including those the relay skips, so this is an upper bound on what is
   * left to publish; pendingEvents and oldestPendingMs are the exact figures.
   */
  readonly positionsBehind: bigint;
  /** Read from the log, not yet acknowledged by the feed. */
  readonly pendingEvents: number;
  /** Age of the oldest pending event, from when the store recorded it: the figure to alert on. */
  readonly oldestPendingMs: number;
  /** Since when publishing has been failing, if it is. */
  readonly failingSince: number | undefined;
}

export interface Relay {
  /** Loads the checkpoint and begins following the log. Resolves once following, not once caught up. */
  start(): Promise<void>;
  /** Stops reading, publishes what it read if the feed lets it in time, and saves the checkpoint. */
  stop(): Promise<void>;
  lag(): Promise<RelayLag>;
  /** Events acknowledged by the feed since start. */
  readonly published: () => number;
}

/**
 * The relay: log → feed, at least once. It reads the global log after its checkpoint, publishes
 * in log order, and moves the checkpoint only after the feed acknowledged. A crash loses nothing
 * (what was unacknowledged is read again); a feed outage only delays (the same batch is retried
 * until it goes through). The price is duplicates, which consumers drop by position.
 */
export function createRelay(options: RelayOptions): Relay {
  const { store, feed, checkpoint } = options;
  const logger = options.logger ?? consoleLogger;
  const batchSize = options.batchSize ?? 500;
  const retryInitialMs = options.retryInitialMs ?? 100;
  const retryMaxMs = options.retryMaxMs ?? 5_000;
  const stopFlushTimeoutMs = options.stopFlushTimeoutMs ?? 5_000;
  const clock = options.clock ?? systemClock;
  const backoff = { initialMs: retryInitialMs, maxMs: retryMaxMs };

  let buffer: RecordedEvent<PublishedEvent>[] = [];
  let inFlight: readonly RecordedEvent<PublishedEvent>[] = [];
  let saved: bigint | undefined;
  let readUpTo: bigint | undefined;
  let publishedCount = 0;
  let running = false;
  let stopping = false;
  let subscription: Subscription | undefined;
  let pump: Promise<void> | undefined;
  let prepared: Promise<boolean> = Promise.resolve(true);
  let resubscribeTimer: NodeJS.Timeout | undefined;
  /** Aborted by stop(): ends the retries of the run in progress and the wait between them. */
  let stopping$ = new AbortController();
  /** Wakes the pump when events arrive; wakes the reader when the buffer has room. */
  const pumpWaits = new Wakeup();
  const readerWaits = new Wakeup();
  /** Publishing and readying the feed: the two ways the relay reaches Kafka, one outage between them. */
  const publishing = new Retry({
    backoff,
    clock,
    log: { logger, failing: 'relay could not publish; retrying', recovered: 'relay publishing again', fields: () => ({ pending: inFlight.length + buffer.length }) },
  });
  const readying = new Retry({
    backoff,
    clock,
    log: { logger, failing: 'relay could not reach the feed to ready its topic; retrying', recovered: 'relay reached the feed', fields: () => ({ pending: buffer.length }) },
  });

  async function onEvent(recorded: RecordedEvent): Promise<void> {
    if (stopping) return;
    // The read asks for published types only; the check is what lets the feed take the event.
    if (isPublishedRecord(recorded)) buffer.push(recorded);
    readUpTo = recorded.position;
    pumpWaits.wake();
    // Backpressure: the log is read no faster than the feed takes it.
    while (buffer.length >= batchSize && !stopping) await readerWaits.wait();
  }

  /** The log subscription: a guarded store reopens its own, so this is for one that gives up. */
  const resubscribing = new Retry({
    backoff: { initialMs: retryMaxMs, maxMs: retryMaxMs },
    clock,
    log: { logger, failing: 'relay lost its log subscription; resubscribing', fields: () => ({ after: String(readUpTo ?? saved) }) },
  });

  function subscribe(): void {
    const after = readUpTo ?? saved;
    const opened = store.subscribeToAll({
      ...(after === undefined ? {} : { after }),
      types: options.types ?? feedEventTypes,
      onEvent,
      onError: (error) => {
        if (stopping) return;
        subscription = undefined;
        resubscribeTimer = setTimeout(() => {
          resubscribeTimer = undefined;
          if (!stopping) subscribe();
        }, resubscribing.failed(error));
      },
    });
    subscription = opened;
    opened.caughtUp.then(() => resubscribing.succeeded(), () => undefined);
  }


  /** Publishes one batch, retrying until the feed acknowledges it, or false if the relay stops or `deadlineMs` would pass first. */
  const publishBatch = async (batch: readonly RecordedEvent<PublishedEvent>[], deadlineMs: number | undefined): Promise<boolean> =>
    (await publishing.run(() => feed.publish(batch), deadlineMs === undefined ? { signal: stopping$.signal } : { deadlineMs })).done;

  /** options.prepareFeed until it succeeds; false if the relay stops first. */
  const prepareFeed = async (prepare: () => Promise<void>): Promise<boolean> => (await readying.run(prepare, { signal: stopping$.signal })).done;

  /**
   * The checkpoint follows the acknowledgments without holding the pump back (measured: two
   * fsyncs per batch sat between one revocation's publish and the next). One save runs at a time,
   * always of the newest acknowledged position; saves asked for meanwhile collapse into the next.
   * The checkpoint still moves only after the feed acknowledged, so a crash at any point only
   * republishes (consumers drop duplicates by position).
   */
  let saveWanted: bigint | undefined;
  let saving: Promise<void> | undefined;

  function commit(batch: readonly RecordedEvent<PublishedEvent>[]): void {
    const last = batch[batch.length - 1];
    if (!last) return;
    publishedCount += batch.length;
    saveWanted = last.position;
    saving ??= saveCheckpoints();
  }

  async function saveCheckpoints(): Promise<void> {
    while (saveWanted !== undefined) {
      const position = saveWanted;
      saveWanted = undefined;
      try {
        await checkpoint.save(position);
        saved = position;
      } catch (error) {
        // Not fatal: the next save covers this one; a crash before it only republishes.
        logger.error({ err: error, position: String(position) }, 'relay could not save its checkpoint');
      }
    }
    saving = undefined;
  }

  async function runPump(): Promise<void> {
    if (!(await prepared)) return;
    while (!stopping) {
      if (buffer.length === 0) {
        await pumpWaits.wait();
        // Woken by the first event of a read: let the log's reader hand over the rest of that read
        // (a commit holds several revocations when they come together) before taking the buffer.
        // Taken at once, the first went alone and the others waited a whole acknowledgement for the
        // next batch, since one batch is in flight at a time. The reader delivers a read in promise
        // callbacks, so one turn of the event loop is enough.
        await nextTurn();
        continue;
      }
      inFlight = buffer.splice(0, batchSize);
      readerWaits.wake();
      const ok = await publishBatch(inFlight, undefined);
      if (!ok) {
        // Stopping during an outage: keep the batch so stop() can try once more within its deadline.
        buffer = [...inFlight, ...buffer];
        inFlight = [];
        return;
      }
      commit(inFlight);
      inFlight = [];
    }
  }

  return {
    async start() {
      if (running) return;
      running = true;
      stopping = false;
      stopping$ = new AbortController();
      saved = await checkpoint.load();
      readUpTo = undefined;
      logger.info({ checkpoint: saved === undefined ? null : String(saved) }, 'relay starting');
      if (options.prepareFeed) prepared = prepareFeed(options.prepareFeed);
      pump = runPump();
      subscribe();
    },

    async stop() {
      if (!running) return;
      stopping = true;
      stopping$.abort();
      if (resubscribeTimer) clearTimeout(resubscribeTimer);
      readerWaits.wake();
      await subscription?.close();
      subscription = undefined;
      pumpWaits.wake();
      await pump;
      // What was read but not acknowledged: one bounded attempt, so a clean stop leaves little to redo.
      // Not if the feed was never readied: its topic may not exist, and the log still has it all.
      const deadline = clock.now() + stopFlushTimeoutMs;
      const ready = await prepared;
      while (ready && buffer.length > 0 && clock.now() < deadline) {
        const batch = buffer.slice(0, batchSize);
        if (!(await publishBatch(batch, deadline))) break;
        buffer.splice(0, batch.length);
        commit(batch);
      }
      if (buffer.length > 0) logger.warn({ unpublished: buffer.length }, 'relay stopped with events unpublished; the next start publishes them');
      // The last acknowledged position is on disk before stop() resolves.
      await saving;
      buffer = [];
      running = false;
    },

    async lag() {
      const head = await store.headPosition();
      const pending = [...inFlight, ...buffer];
      const oldest = pending[0];
      const reference = oldest ? saved : (readUpTo ?? saved);
      const positionsBehind = head === undefined ? 0n : head - (reference ?? 0n);
      return {
        checkpoint: saved,
        head,
        positionsBehind: positionsBehind < 0n ? 0n : positionsBehind,
        pendingEvents: pending.length,
        oldestPendingMs: oldest ? Math.max(0, clock.now() - oldest.recordedAt) : 0,
        failingSince: publishing.failingSinceMs ?? readying.failingSinceMs,
      };
    },

    published: () => publishedCount,
  };
}
