import type { RecordedEvent } from '@tessera/contracts';
import { systemClock } from '@tessera/timing';
import { decodeFeedMessage, encodeFeedMessage, type EncodedFeedMessage } from './feed-message.js';
import {
  FeedClosed,
  FeedHandlerFailed,
  FeedMessageInvalid,
  type ConsumeOptions,
  type FeedConsumer,
  type RevocationFeed,
} from './revocation-feed.js';

/**
 * The embedded adapter: one process, one ordered log in memory. Messages are kept encoded,
 * exactly as Kafka would carry them, so a value that does not survive the wire fails here too.
 * A single partition orders everything, which is stronger than per-key order.
 */
export class InProcessRevocationFeed implements RevocationFeed {
  private readonly log: EncodedFeedMessage[] = [];
  /** group id → index of the next message the group has not consumed. */
  private readonly committed = new Map<string, number>();
  private readonly wakers = new Set<() => void>();
  private readonly consumers = new Set<FeedConsumer>();
  private closed = false;

  async publish(events: readonly RecordedEvent[]): Promise<void> {
    if (this.closed) throw new FeedClosed();
    const encoded = events.map(encodeFeedMessage);
    this.log.push(...encoded);
    for (const wake of this.wakers) wake();
  }

  async consume(options: ConsumeOptions): Promise<FeedConsumer> {
    if (this.closed) throw new FeedClosed();
    const { groupId, since, onEvent, onError } = options;
    let next = since === undefined ? (this.committed.get(groupId) ?? 0) : this.firstIndexAtOrAfter(since);
    const readyAt = this.log.length;
    let stopped = false;
    /** The index after the last message handed on (onEvent done with it), and when that event was recorded. */
    let handedOn = next;
    let lastRecordedAt: number | undefined;
    const startedAt = systemClock.now();
    let wake: (() => void) | undefined;
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const waker = () => wake?.();
    this.wakers.add(waker);

    const loop = (async () => {
      while (!stopped) {
        if (next >= readyAt) markReady();
        const message = this.log[next];
        if (message === undefined) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        const offset = next;
        next += 1;
        try {
          const decoded = decodeFeedMessage(message.value);
          // An event type this version does not know is skipped, as the Kafka adapter skips it.
          if (decoded.known) await onEvent(decoded.feedEvent, { partition: 0, offset: String(offset) });
          lastRecordedAt = decoded.known ? decoded.feedEvent.recordedAt : decoded.recordedAt;
        } catch (error) {
          onError?.(error instanceof FeedMessageInvalid ? error : new FeedHandlerFailed('onEvent threw', { cause: error }));
        }
        handedOn = next;
        this.committed.set(groupId, Math.max(this.committed.get(groupId) ?? 0, next));
      }
    })();

    const consumer: FeedConsumer = {
      ready,
      lag: async () => {
        const pendingEvents = this.log.length - handedOn;
        return { pendingEvents, behindSince: pendingEvents > 0 ? (lastRecordedAt ?? startedAt) : undefined };
      },
      close: async () => {
        stopped = true;
        this.wakers.delete(waker);
        this.consumers.delete(consumer);
        wake?.();
        await loop;
      },
    };
    this.consumers.add(consumer);
    return consumer;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.consumers].map((consumer) => consumer.close()));
  }

  private firstIndexAtOrAfter(since: number): number {
    const index = this.log.findIndex((message) => message.timestamp >= since);
    return index === -1 ? this.log.length : index;
  }
}

export function createInProcessFeed(): InProcessRevocationFeed {
  return new InProcessRevocationFeed();
}
