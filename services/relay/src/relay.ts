import type { RecordedEvent, TesseraEventType } from '@tessera/contracts';
import type { EventStore, Subscription } from '@tessera/event-store';
import { consoleLogger, feedEventTypes, type FeedLogger, type RevocationFeed } from '@tessera/feed';
import type { RelayCheckpoint } from './relay-checkpoint.js';

export interface RelayOptions {
  readonly store: EventStore;
  readonly feed: RevocationFeed;
  readonly checkpoint: RelayCheckpoint;
  /** The event types this relay carries; default the revocation feed's (feedEventTypes). */
  readonly types?: readonly TesseraEventType[];
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
  readonly now?: () => number;
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
  const now = options.now ?? Date.now;

  let buffer: RecordedEvent[] = [];
  let inFlight: readonly RecordedEvent[] = [];
  let saved: bigint | undefined;
  let readUpTo: bigint | undefined;
  let publishedCount = 0;
  let failingSince: number | undefined;
  let running = false;
  let stopping = false;
  let subscription: Subscription | undefined;
  let pump: Promise<void> | undefined;
  let prepared: Promise<boolean> = Promise.resolve(true);
  let resubscribeTimer: NodeJS.Timeout | undefined;
  /** Wakes the pump when events arrive; wakes the reader when the buffer has room. */
  let wakePump: (() => void) | undefined;
  let wakeReader: (() => void) | undefined;
  let sleepCancel: (() => void) | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        sleepCancel = undefined;
        resolve();
      }
      sleepCancel = done;
    });

  async function onEvent(recorded: RecordedEvent): Promise<void> {
    if (stopping) return;
    buffer.push(recorded);
    readUpTo = recorded.position;
    wakePump?.();
    // Backpressure: the log is read no faster than the feed takes it.
    while (buffer.length >= batchSize && !stopping) await new Promise<void>((resolve) => (wakeReader = resolve));
  }

  function subscribe(): void {
    const after = readUpTo ?? saved;
    subscription = store.subscribeToAll({
      ...(after === undefined ? {} : { after }),
      types: options.types ?? feedEventTypes,
      onEvent,
      onError: (error) => {
        if (stopping) return;
        logger.error({ err: error, after: String(readUpTo ?? saved) }, 'relay lost its log subscription; resubscribing');
        subscription = undefined;
        resubscribeTimer = setTimeout(() => {
          resubscribeTimer = undefined;
          if (!stopping) subscribe();
        }, retryMaxMs);
      },
    });
  }

  /**
   * Runs `attempt` until it succeeds, with backoff; false if the relay must give up first (it is
   * stopping, or `giveUpAt` would pass). Keeps failingSince for lag(); loud at first, then every
   * tenth attempt: an outage must be seen without flooding the log.
   */
  async function untilDone(
    attempt: () => Promise<void>,
    said: { readonly failing: string; readonly recovered: string },
    pending: () => number,
    giveUpAt?: number,
  ): Promise<boolean> {
    let delay = retryInitialMs;
    let attempts = 0;
    for (;;) {
      try {
        await attempt();
        if (failingSince !== undefined) {
          logger.info({ outageMs: now() - failingSince, attempts }, said.recovered);
          failingSince = undefined;
        }
        return true;
      } catch (error) {
        attempts += 1;
        if (failingSince === undefined) failingSince = now();
        if (attempts === 1 || attempts % 10 === 0) logger.warn({ err: error, attempts, pending: pending() }, said.failing);
        if (giveUpAt !== undefined && now() + delay > giveUpAt) return false;
        if (stopping && giveUpAt === undefined) return false;
        await sleep(delay);
        delay = Math.min(delay * 2, retryMaxMs);
      }
    }
  }

  /** Publishes one batch, retrying until the feed acknowledges it or the relay must give up. */
  const publishBatch = (batch: readonly RecordedEvent[], giveUpAt: number | undefined) =>
    untilDone(() => feed.publish(batch), { failing: 'relay could not publish; retrying', recovered: 'relay publishing again' }, () => batch.length + buffer.length, giveUpAt);

  /** options.prepareFeed until it succeeds; false if the relay stops first. */
  const prepareFeed = (prepare: () => Promise<void>) =>
    untilDone(prepare, { failing: 'relay could not reach the feed to ready its topic; retrying', recovered: 'relay reached the feed' }, () => buffer.length);

  /**
   * The checkpoint follows the acknowledgments without holding the pump back (issue 14: two
   * fsyncs per batch sat between one revocation's publish and the next). One save runs at a time,
   * always of the newest acknowledged position; saves asked for meanwhile collapse into the next.
   * The checkpoint still moves only after the feed acknowledged, so a crash at any point only
   * republishes (consumers drop duplicates by position).
   */
  let saveWanted: bigint | undefined;
  let saving: Promise<void> | undefined;

  function commit(batch: readonly RecordedEvent[]): void {
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
        await new Promise<void>((resolve) => (wakePump = resolve));
        wakePump = undefined;
        continue;
      }
      inFlight = buffer.splice(0, batchSize);
      wakeReader?.();
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
      if (resubscribeTimer) clearTimeout(resubscribeTimer);
      wakeReader?.();
      await subscription?.close();
      subscription = undefined;
      sleepCancel?.();
      wakePump?.();
      await pump;
      // What was read but not acknowledged: one bounded attempt, so a clean stop leaves little to redo.
      // Not if the feed was never readied: its topic may not exist, and the log still has it all.
      const deadline = now() + stopFlushTimeoutMs;
      const ready = await prepared;
      while (ready && buffer.length > 0 && now() < deadline) {
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
        oldestPendingMs: oldest ? Math.max(0, now() - oldest.recordedAt) : 0,
        failingSince,
      };
    },

    published: () => publishedCount,
  };
}
