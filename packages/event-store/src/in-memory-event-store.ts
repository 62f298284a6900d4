import { InvalidArgument, TesseraEvent, type EventMetadata, type RecordedEvent } from '@tessera/events';
import { systemClock, type Clock } from '@tessera/timing';
import {
  EventStoreUnavailable,
  ExpectedRevisionConflict,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type SubscribeOptions,
  type Subscription,
} from './event-store.js';
import { TimeSlices, Wakeup, settledFromOutside } from './delivery-signals.js';
import { InvalidEvent } from './event-store.js';
import { newEventId } from './event-id.js';

export interface InMemoryEventStoreOptions {
  /** For `recordedAt` and `positionBefore`; default the system's. */
  readonly clock?: Clock;
}

/** readAll's page when the caller gives no maxCount: the same as the SQLite and EventStoreDB adapters. */
const defaultPageSize = 5000;

/**
 * The whole port in memory, for fast tests of whatever sits on it. No I/O: nothing survives
 * the process. Positions are 1, 2, 3…, so the event at position p is `log[p - 1]`. Every call
 * does its work at once and in one piece, so concurrent appends are decided in call order.
 */
export class InMemoryEventStore implements EventStore {
  private readonly log: RecordedEvent[] = [];
  private readonly byStream = new Map<string, RecordedEvent[]>();
  /** Every event id in the log: as SQLite's unique index, an id names one event only (docs/decisions/0007). */
  private readonly eventIds = new Set<string>();
  private readonly now: () => number;
  private readonly wakers = new Set<() => void>();
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;

  constructor(options: InMemoryEventStoreOptions = {}) {
    this.now = () => (options.clock ?? systemClock).now();
  }

  async append(stream: string, events: readonly NewEvent[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new InvalidArgument('append needs at least one event');
    for (const { event } of events) {
      const checked = TesseraEvent.safeParse(event);
      if (!checked.success) throw new InvalidEvent(`invalid ${event.type} event: ${checked.error.message}`);
    }
    const existing = this.byStream.get(stream) ?? [];
    const current = existing.length - 1;
    const ids = events.map(({ eventId }) => eventId ?? newEventId());
    const conflict = () => new ExpectedRevisionConflict(stream, options.expectedRevision, current < 0 ? 'no_stream' : BigInt(current));
    const retried = this.retriedAppend(existing, options.expectedRevision, ids);
    if (retried === 'conflict') throw conflict();
    if (retried) return retried;
    // An id already in the log names another event: only a retry of the same append may reuse it.
    if (ids.some((id) => this.eventIds.has(id)) || new Set(ids).size !== ids.length) throw conflict();

    // Never earlier than the last event, so the log's times only go forwards and positionBefore can bisect.
    const recordedAt = Math.max(this.now(), this.log[this.log.length - 1]?.recordedAt ?? 0);
    const written = events.map(({ event, metadata }, index): RecordedEvent => {
      const recorded: RecordedEvent = {
        eventId: ids[index]!,
        stream,
        revision: BigInt(current + 1 + index),
        position: BigInt(this.log.length + 1 + index),
        // What a persisted store gives back: a copy, whatever the caller does with its objects later.
        event: copyOf(event),
        metadata: copyOf(metadata ?? {}),
        recordedAt,
      };
      return Object.freeze(recorded);
    });
    this.log.push(...written);
    this.byStream.set(stream, [...existing, ...written]);
    for (const id of ids) this.eventIds.add(id);
    for (const wake of this.wakers) wake();
    return resultOf(written[written.length - 1]!);
  }

  /**
   * Idempotence as EventStoreDB has it (docs/decisions/0007): undefined when the append is new,
   * the original result when exactly these ids follow the expected revision, else 'conflict'.
   */
  private retriedAppend(existing: readonly RecordedEvent[], expected: ExpectedRevision, ids: readonly string[]): AppendResult | 'conflict' | undefined {
    const current = existing.length - 1;
    let after: number;
    if (expected === 'any') {
      const first = existing.findIndex((recorded) => recorded.eventId === ids[0]);
      if (first < 0) return undefined;
      after = first - 1;
    } else {
      after = expected === 'no_stream' ? -1 : Number(expected);
      if (after > current) return 'conflict';
      if (after === current) return undefined;
    }
    const following = existing.slice(after + 1, after + 1 + ids.length);
    if (following.length !== ids.length || following.some((recorded, index) => recorded.eventId !== ids[index])) return 'conflict';
    return resultOf(following[following.length - 1]!);
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const { fromRevision } = options;
    const backwards = options.direction === 'backwards';
    const events = (this.byStream.get(stream) ?? []).filter((recorded) => fromRevision === undefined || (backwards ? recorded.revision <= fromRevision : recorded.revision >= fromRevision));
    if (backwards) events.reverse();
    return events.slice(0, options.maxCount ?? events.length);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const limit = options.maxCount ?? defaultPageSize;
    const page: RecordedEvent[] = [];
    for (let index = Number(options.after ?? 0n); index < this.log.length && page.length < limit; index += 1) {
      const recorded = this.log[index]!;
      if (!options.types || options.types.includes(recorded.event.type)) page.push(recorded);
    }
    return page;
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    this.assertOpen();
    const subscription = this.startSubscription(options);
    this.subscriptions.add(subscription);
    return {
      caughtUp: subscription.caughtUp,
      lastPosition: subscription.lastPosition,
      close: async () => {
        this.subscriptions.delete(subscription);
        await subscription.close();
      },
    };
  }

  /** Delivers one event at a time, after the call that appended it returned, as a store elsewhere would. */
  private startSubscription(options: SubscribeOptions): Subscription {
    let after = options.after;
    let closed = false;
    const newEvents = new Wakeup();
    const waker = () => newEvents.wake();
    this.wakers.add(waker);
    const stop = () => {
      closed = true;
      this.wakers.delete(waker);
    };
    const caughtUp = settledFromOutside();
    const slices = new TimeSlices();
    const headAtStart = this.log.length;

    const loop = (async () => {
      // Start on a later turn: subscribeToAll returns before the first delivery.
      await Promise.resolve();
      while (!closed) {
        const next = this.log[Number(after ?? 0n)];
        if (!next) {
          caughtUp.resolve();
          await newEvents.wait();
          continue;
        }
        if (!options.types || options.types.includes(next.event.type)) {
          // Awaiting only real promises keeps a synchronous reader's delivery tight.
          const pending = options.onEvent(next);
          if (pending) await pending;
        }
        after = next.position;
        if (after >= BigInt(headAtStart)) caughtUp.resolve();
        await slices.yieldIfDue();
      }
    })().catch((error: unknown) => {
      stop();
      caughtUp.reject(error);
      options.onError?.(error);
    });

    return {
      caughtUp: caughtUp.promise,
      lastPosition: () => after,
      close: async () => {
        stop();
        newEvents.wake();
        await loop;
      },
    };
  }

  async headPosition(): Promise<bigint | undefined> {
    this.assertOpen();
    return this.log[this.log.length - 1]?.position;
  }

  /** The newest event recorded before `epochMs`; recordedAt never goes down along the log, so a bisection finds it. */
  async positionBefore(epochMs: number): Promise<bigint | undefined> {
    this.assertOpen();
    let low = 0;
    let high = this.log.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.log[middle]!.recordedAt < epochMs) low = middle + 1;
      else high = middle;
    }
    return low === 0 ? undefined : BigInt(low);
  }

  /** Nothing can be out of reach in memory: only a closed store refuses. */
  async probe(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    this.subscriptions.clear();
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreUnavailable('event store is closed');
  }
}

const resultOf = (recorded: RecordedEvent): AppendResult => ({ nextExpectedRevision: recorded.revision, position: recorded.position });

/** Events and metadata are plain JSON, and a persisted store hands back what JSON kept. */
function copyOf<T extends TesseraEvent | EventMetadata>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
