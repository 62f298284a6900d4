import type { RecordedEvent, TesseraEventType } from '@tessera/contracts';
import { EventStoreUnavailable, type SubscribeOptions } from '@tessera/event-store';

export interface SqliteSubscriptionDeps {
  readonly options: SubscribeOptions;
  readonly readPage: (after: bigint | undefined, types: readonly TesseraEventType[] | undefined) => RecordedEvent[];
  readonly pageSize: number;
  readonly pollIntervalMs: number;
  /** Same-process appends wake the loop at once; other processes' are found by polling. */
  readonly registerWaker: (wake: () => void) => () => void;
}

export function createSqliteSubscription(deps: SqliteSubscriptionDeps) {
  const { options, readPage, pageSize, pollIntervalMs, registerWaker } = deps;
  let after = options.after;
  let closed = false;
  let wake: (() => void) | undefined;
  let markCaughtUp!: () => void;
  let failCaughtUp!: (error: unknown) => void;
  const caughtUp = new Promise<void>((resolve, reject) => {
    markCaughtUp = resolve;
    failCaughtUp = reject;
  });
  // Rejected when the subscription fails before catching up; nobody awaiting it is no crash.
  caughtUp.catch(() => undefined);
  const unregister = registerWaker(() => wake?.());

  const idle = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, pollIntervalMs);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  const loop = (async () => {
    while (!closed) {
      let page: RecordedEvent[];
      try {
        page = readPage(after, options.types);
      } catch (error) {
        // A read the database refused (busy past its timeout, an I/O error) is the store's outage, not the reader's.
        throw new EventStoreUnavailable(`reading the SQLite log failed: ${(error as Error).message}`, { cause: error });
      }
      for (const recorded of page) {
        if (closed) return;
        // Most readers are synchronous: awaiting only real promises saves a microtask per event on rebuilds.
        const pending = options.onEvent(recorded);
        if (pending) await pending;
        after = recorded.position;
      }
      if (page.length < pageSize) {
        markCaughtUp();
        await idle();
      }
    }
  })().catch((error: unknown) => {
    closed = true;
    unregister();
    failCaughtUp(error);
    if (options.onError) options.onError(error);
  });

  return {
    caughtUp,
    lastPosition: () => after,
    close: async () => {
      closed = true;
      unregister();
      wake?.();
      await loop;
    },
  };
}
