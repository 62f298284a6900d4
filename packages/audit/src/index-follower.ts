import type { RecordedEvent } from '@tessera/contracts';
import type { SubscribeOptions, Subscription } from '@tessera/event-store';
import type { AuditIndex } from './audit-index.js';

export interface IndexFollowerOptions {
  /** Events per transaction: large enough that a rebuild is a few hundred commits per million events. */
  readonly batchSize?: number;
  /** How long a partial batch waits for more before it is written: the index's lag when the log is quiet. */
  readonly flushDelayMs?: number;
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
 * brings the index to, so a process that stops at any moment resumes without loss or repeat.
 */
export function followIntoIndex(
  store: { subscribeToAll(options: SubscribeOptions): Subscription },
  index: AuditIndex,
  options: IndexFollowerOptions,
): IndexFollower {
  const batchSize = options.batchSize ?? 2000;
  const flushDelayMs = options.flushDelayMs ?? 50;
  let buffer: RecordedEvent[] = [];
  /** The position the next batch follows: what this follower has written or read past. */
  let appliedUpTo = index.position();
  let timer: NodeJS.Timeout | undefined;
  let subscription: Subscription | undefined;
  /** Counts subscriptions opened: deliveries of one replaced after a gap are dropped, the new one reads them again. */
  let opened = 0;
  let stopped = false;
  let markCaughtUp!: () => void;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

  const fail = (error: unknown) => {
    if (stopped) return;
    stopped = true;
    void subscription?.close();
    options.onError(error);
  };

  /** Writes what is gathered. On a gap (another process emptied the index) it reads again from where the index is. */
  const flush = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0 || stopped) return;
    const batch = buffer;
    buffer = [];
    const outcome = index.apply(batch, appliedUpTo);
    if (outcome.gap) {
      appliedUpTo = outcome.position;
      opened += 1;
      const previous = subscription;
      subscription = undefined;
      void previous?.close().then(() => open(), fail);
      return;
    }
    appliedUpTo = batch[batch.length - 1]!.position;
  };

  const open = (): void => {
    if (stopped) return;
    const current = ++opened;
    subscription = store.subscribeToAll({
      ...(appliedUpTo === undefined ? {} : { after: appliedUpTo }),
      onEvent: (recorded) => {
        if (current !== opened) return;
        buffer.push(recorded);
        if (buffer.length >= batchSize) flush();
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
          markCaughtUp();
        } catch (error) {
          fail(error);
        }
      },
      // A failed catch-up reaches onError too.
      () => undefined,
    );
  };
  open();

  return {
    caughtUp,
    close: async () => {
      opened += 1;
      const closing = subscription;
      subscription = undefined;
      await closing?.close();
      // What was delivered before the close is kept: the next start need not read it again.
      if (!stopped) {
        try {
          const pending = buffer;
          buffer = [];
          if (pending.length > 0) index.apply(pending, appliedUpTo);
        } finally {
          stopped = true;
          if (timer !== undefined) clearTimeout(timer);
        }
      }
    },
  };
}
