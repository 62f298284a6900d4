import type { RecordedEvent, TesseraEventType } from '@tessera/events';
import { EventStoreUnavailable, TimeSlices, Wakeup, settledFromOutside, type SubscribeOptions } from '@tessera/event-store';

/** The live tail of the log after a position: its events of the wanted types, and how far it was read. */
export interface LiveTail {
  readonly events: RecordedEvent[];
  /** The last position read, of any type: nothing at or before it is left to deliver. */
  readonly readTo: bigint | undefined;
}

export interface SqliteSubscriptionDeps {
  readonly options: SubscribeOptions;
  readonly readPage: (after: bigint | undefined, types: readonly TesseraEventType[] | undefined) => RecordedEvent[];
  /**
   * Once caught up, a filtered subscription reads what is new in one scan of the log's tail
   * (undefined when the tail is too long for that: then readPage, by type). Without it, each
   * wake costs one index query per type even when nothing of those types is new.
   */
  readonly readLiveTail?: (after: bigint | undefined, types: readonly TesseraEventType[]) => LiveTail | undefined;
  readonly pageSize: number;
  readonly pollIntervalMs: number;
  /** Same-process appends wake the loop at once; other processes' are found by polling. */
  readonly registerWaker: (wake: () => void) => () => void;
  /** The longest the loop runs without giving the event loop a turn (default 5 ms): a catch-up of any length costs a request at most this. */
  readonly sliceMs?: number;
}

export function createSqliteSubscription(deps: SqliteSubscriptionDeps) {
  const { options, readPage, readLiveTail, pageSize, pollIntervalMs, registerWaker } = deps;
  /** Where the next read starts: may run ahead of the last delivered event over events of other types. */
  let after = options.after;
  /** The last event handled (lastPosition()): resuming after it loses and repeats nothing. */
  let delivered = options.after;
  let live = false;
  let closed = false;
  const caughtUp = settledFromOutside();
  const newEvents = new Wakeup();
  /**
   * Set by a commit's wake, cleared as a read begins. A wake that comes while the loop is reading
   * or delivering (a delivery gives the event loop a turn once its time slice is used up, and
   * commits are answered in such turns) finds no one waiting, and Wakeup drops it; the commit it
   * announces may be newer than the read. Without this flag the loop then slept a whole poll
   * interval (100 ms) before it found that commit: with revocations committed while others were
   * being delivered, up to one in a hundred of bursts of eight reached the relay a poll interval late.
   */
  let woken = false;
  const unregister = registerWaker(() => {
    woken = true;
    newEvents.wake();
  });
  const idle = async () => {
    // Woken since the read began: read again at once, still within the slice of work in progress.
    if (woken) return;
    await newEvents.wait(pollIntervalMs);
    slices.restart();
  };
  /** A read is about to begin: every commit answered so far is in it. */
  const beginRead = () => {
    woken = false;
  };
  const slices = new TimeSlices(deps.sliceMs);

  const read = <T>(reading: () => T): T => {
    try {
      return reading();
    } catch (error) {
      // A read the database refused (busy past its timeout, an I/O error) is the store's outage, not the reader's.
      throw new EventStoreUnavailable(`reading the SQLite log failed: ${(error as Error).message}`, { cause: error });
    }
  };

  /** Hands each event to the reader in order; false when the subscription closed meanwhile. */
  const deliver = async (events: readonly RecordedEvent[]): Promise<boolean> => {
    for (const recorded of events) {
      if (closed) return false;
      // Most readers are synchronous: awaiting only real promises saves a microtask per event on rebuilds.
      const pending = options.onEvent(recorded);
      if (pending) await pending;
      after = recorded.position;
      delivered = recorded.position;
      await slices.yieldIfDue();
    }
    return true;
  };

  const loop = (async () => {
    while (!closed) {
      const types = options.types;
      if (live && types && readLiveTail) {
        beginRead();
        const tail = read(() => readLiveTail(after, types));
        if (tail) {
          if (!(await deliver(tail.events))) return;
          // Every event up to readTo was read in one snapshot: those of other types need no second look.
          if (tail.readTo !== undefined && (after === undefined || tail.readTo > after)) after = tail.readTo;
          await idle();
          continue;
        }
      }
      beginRead();
      const page = read(() => readPage(after, types));
      if (!(await deliver(page))) return;
      // A full page is a backlog: read by type until it is gone.
      live = page.length < pageSize;
      if (live) {
        caughtUp.resolve();
        await idle();
      }
    }
  })().catch((error: unknown) => {
    closed = true;
    unregister();
    caughtUp.reject(error);
    if (options.onError) options.onError(error);
  });

  return {
    caughtUp: caughtUp.promise,
    lastPosition: () => delivered,
    close: async () => {
      closed = true;
      unregister();
      newEvents.wake();
      await loop;
    },
  };
}
