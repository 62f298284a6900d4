import { errorCode, type RecordedEvent } from '@tessera/events';
import type { SubscribeOptions, Subscription } from '@tessera/event-store';
import type { AuditIndex } from './audit-index.js';

export interface IndexFollowerOptions {
  /** Events per transaction while filling an empty index in bulk: a rebuild is a few hundred commits per million events. */
  readonly batchSize?: number;
  /**
   * Events per transaction once the index holds rows: a query waits for the transaction under way
   * (the thread answers between them), so a backlog is written in short ones, and a query that
   * arrives during a burst waits for one short transaction, not for the backlog.
   */
  readonly liveBatchSize?: number;
  /** How long a partial batch waits for more before it is written: the index's lag when the log is quiet. */
  readonly flushDelayMs?: number;
  /** How long to wait before trying again when another process holds the index (`tessera audit` filling it). */
  readonly busyRetryMs?: number;
  /** The index could not be written, or the subscription ended for good; the follower has stopped. */
  readonly onError: (error: unknown) => void;
}

export interface IndexFollower {
  /** Resolves once the index has caught up with the log, written, for the first time. */
  readonly caughtUp: Promise<void>;
  close(): Promise<void>;
}

/**
 * Feeds an audit index from any EventStore's subscription to the whole log, from the position the
 * index reflects: events are gathered and written in batches, each batch with the position it
 * brings the index to, so a process that stops at any moment resumes without loss or repeat. An
 * empty index is filled in one bulk load (AuditIndex.startBulkLoad).
 *
 * When the index does not reflect what this follower wrote (another process emptied it), or
 * another process holds it, the follower reads again from where the index is.
 */
export function followIntoIndex(
  store: { subscribeToAll(options: SubscribeOptions): Subscription },
  index: AuditIndex,
  options: IndexFollowerOptions,
): IndexFollower {
  const batchSize = options.batchSize ?? 5000;
  const liveBatchSize = options.liveBatchSize ?? Math.min(batchSize, 1000);
  const flushDelayMs = options.flushDelayMs ?? 50;
  const busyRetryMs = options.busyRetryMs ?? 1000;
  let buffer: RecordedEvent[] = [];
  /** The position the next batch follows: what this follower has written or read past. */
  let appliedUpTo: bigint | undefined;
  let timer: NodeJS.Timeout | undefined;
  let subscription: Subscription | undefined;
  /** Counts subscriptions opened: deliveries of one that was replaced are dropped, the new one reads them again. */
  let opened = 0;
  let stopped = false;
  let bulk = false;
  let markCaughtUp!: () => void;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

  const fail = (error: unknown) => {
    if (stopped) return;
    stopped = true;
    void subscription?.close();
    index.abandonBulkLoad();
    options.onError(error);
  };

  /** Drops what is gathered and subscribes again from where the index is, after `delayMs`. */
  const restart = (delayMs: number) => {
    opened += 1;
    buffer = [];
    index.abandonBulkLoad();
    const previous = subscription;
    subscription = undefined;
    void previous?.close().then(() => {
      const reopen = setTimeout(open, delayMs);
      reopen.unref();
    }, fail);
  };

  /** Writes what is gathered, in one transaction with the position it brings the index to. */
  const flush = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0 || stopped) return;
    const batch = buffer;
    buffer = [];
    let outcome;
    try {
      outcome = index.apply(batch, appliedUpTo);
    } catch (error) {
      if (!busy(error)) throw error;
      restart(busyRetryMs);
      return;
    }
    if (outcome.gap) restart(0);
    else appliedUpTo = batch[batch.length - 1]!.position;
  };

  function open(): void {
    if (stopped) return;
    const current = ++opened;
    appliedUpTo = index.position();
    try {
      // A rebuild from nothing loads in bulk: the secondary indexes are made once, at the end.
      bulk = index.startBulkLoad();
    } catch (error) {
      if (!busy(error)) return fail(error);
      // Another process is filling the index: follow it row by row once it is done.
      bulk = false;
    }
    subscription = store.subscribeToAll({
      ...(appliedUpTo === undefined ? {} : { after: appliedUpTo }),
      onEvent: (recorded) => {
        if (current !== opened) return;
        buffer.push(recorded);
        if (buffer.length >= (bulk ? batchSize : liveBatchSize)) flush();
        else if (timer === undefined) {
          timer = setTimeout(() => {
            try {
              flush();
            } catch (error) {
              fail(error);
            }
          }, flushDelayMs);
          timer.unref();
        }
      },
      onError: (error) => {
        if (current === opened) fail(error);
      },
    });
    subscription.caughtUp.then(
      () => {
        if (current !== opened) return;
        try {
          flush();
          if (current !== opened) return;
          if (bulk) index.finishBulkLoad();
          bulk = false;
          markCaughtUp();
        } catch (error) {
          fail(error);
        }
      },
      // A failed catch-up reaches onError too.
      () => undefined,
    );
  }
  open();

  return {
    caughtUp,
    close: async () => {
      opened += 1;
      const closing = subscription;
      subscription = undefined;
      await closing?.close();
      if (stopped) return;
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      // A bulk load not finished is dropped whole: the next start loads again. Otherwise what was
      // delivered is kept, so the next start need not read it again.
      if (bulk) index.abandonBulkLoad();
      else if (buffer.length > 0) index.apply(buffer, appliedUpTo);
      buffer = [];
    },
  };
}

const busy = (error: unknown) => {
  const code = errorCode(error);
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
};
