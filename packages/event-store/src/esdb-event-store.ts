import { randomUUID } from 'node:crypto';
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  START,
  eventTypeFilter,
  excludeSystemEvents,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type StreamingRead,
} from '@eventstore/db-client';
import type { RecordedEvent } from '@tessera/contracts';
import {
  EventStoreUnavailable,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type SubscribeOptions,
  type Subscription,
} from './event-store.js';
import {
  eventTypeRegex,
  fromResolvedEvent,
  isAfter,
  isStreamNotFound,
  isSystemEvent,
  toEsdbExpectedRevision,
  toEventData,
  toReadPosition,
  translateEsdbError,
} from './esdb-mapping.js';

export interface EsdbEventStoreOptions {
  /** `esdb://host:2113?tls=false` for a dev node, `esdb+discover://…` for a cluster. */
  readonly connectionString: string;
  /** readAll's page when the caller gives no maxCount; matches the SQLite adapter. */
  readonly defaultPageSize?: number;
}

/**
 * The production adapter: EventStoreDB over gRPC. Streams are named exactly as callers name
 * them, so `tokenfamily-…` and `account-…` are browsable in the ESDB UI and usable from its
 * projections. All translation rules live in esdb-mapping.ts.
 */
export class EsdbEventStore implements EventStore {
  private readonly client: EventStoreDBClient;
  private readonly defaultPageSize: number;
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;

  constructor(options: EsdbEventStoreOptions) {
    this.client = EventStoreDBClient.connectionString(options.connectionString);
    this.defaultPageSize = options.defaultPageSize ?? 1000;
  }

  async append(stream: string, events: readonly NewEvent[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new TypeError('append needs at least one event');
    const data = events.map((event) => toEventData(event, randomUUID));
    const expectedRevision = toEsdbExpectedRevision(options.expectedRevision);
    try {
      const result = await this.client.appendToStream(stream, data, { expectedRevision });
      const position = result.position?.commit ?? (await this.positionOfRevision(stream, result.nextExpectedRevision));
      return { nextExpectedRevision: result.nextExpectedRevision, position };
    } catch (error) {
      throw translateEsdbError(error, { stream, expected: options.expectedRevision, operation: `append to ${stream}` });
    }
  }

  /**
   * Only for servers that answer an idempotent retry without a position (before 22.x). The
   * retry's answer is the original append's, so the position is that of its last event — not
   * of the stream's last, which may have moved on since (docs/decisions/0006).
   */
  private async positionOfRevision(stream: string, revision: bigint): Promise<bigint> {
    const read = this.client.readStream(stream, { direction: FORWARDS, fromRevision: revision, maxCount: 1 });
    for await (const resolved of read) {
      const recorded = fromResolvedEvent(resolved);
      if (recorded?.revision === revision) return recorded.position;
    }
    throw new Error(`append to ${stream} succeeded but revision ${revision} reads empty`);
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    if (options.maxCount === 0) return [];
    const read = this.client.readStream(stream, {
      direction: backwards ? BACKWARDS : FORWARDS,
      // Backwards from START would yield revision 0 alone.
      fromRevision: backwards ? END : START,
      ...(options.maxCount === undefined ? {} : { maxCount: options.maxCount }),
    });
    const out: RecordedEvent[] = [];
    try {
      for await (const resolved of read) {
        const recorded = fromResolvedEvent(resolved);
        if (recorded) out.push(recorded);
      }
    } catch (error) {
      if (isStreamNotFound(error)) return [];
      throw translateEsdbError(error, { stream, operation: `read ${stream}` });
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const limit = options.maxCount ?? this.defaultPageSize;
    const out: RecordedEvent[] = [];
    if (limit <= 0) return out;
    // The client's readAll has no server-side filter, so system events and other types are
    // dropped here; reading stops as soon as `limit` events are in hand.
    const read = this.client.readAll({ direction: FORWARDS, fromPosition: toReadPosition(options.after) });
    await this.consume(read, 'read $all', (resolved) => {
      const recorded = fromResolvedEvent(resolved, options.types);
      if (recorded && isAfter(recorded.position, options.after)) out.push(recorded);
      return out.length < limit;
    });
    return out;
  }

  async headPosition(): Promise<bigint | undefined> {
    this.assertOpen();
    let head: bigint | undefined;
    // ESDB writes its own $stats events every few seconds, so the newest record is often not ours.
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END });
    await this.consume(read, 'read $all backwards', (resolved) => {
      const event = resolved.event;
      if (!event || isSystemEvent(event.type, event.streamId)) return true;
      head = event.position.commit;
      return false;
    });
    return head;
  }

  /** Walks $all backwards to the first event of ours recorded before the time: linear in what came after it. */
  async positionBefore(epochMs: number): Promise<bigint | undefined> {
    this.assertOpen();
    let before: bigint | undefined;
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END });
    await this.consume(read, 'read $all backwards', (resolved) => {
      const event = resolved.event;
      if (!event || isSystemEvent(event.type, event.streamId)) return true;
      if (event.created.getTime() >= epochMs) return true;
      before = event.position.commit;
      return false;
    });
    return before;
  }

  /** A one-event read of $all: the server must answer, which is what every append needs too. */
  async probe(): Promise<void> {
    this.assertOpen();
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    await this.consume(read, 'probe', () => false);
  }

  /** Iterates a read until `keepGoing` says stop, then cancels the gRPC call so it does not linger. */
  private async consume(
    read: StreamingRead<AllStreamResolvedEvent>,
    operation: string,
    keepGoing: (resolved: AllStreamResolvedEvent) => boolean,
  ): Promise<void> {
    let stoppedEarly = false;
    try {
      for await (const resolved of read) {
        if (!keepGoing(resolved)) {
          stoppedEarly = true;
          break;
        }
      }
    } catch (error) {
      throw translateEsdbError(error, { operation });
    } finally {
      if (stoppedEarly) await read.cancel().catch(() => undefined);
    }
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    this.assertOpen();
    const subscription = createEsdbSubscription(this.client, options, () => this.headPosition());
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    this.subscriptions.clear();
    await this.client.dispose();
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreUnavailable('event store is closed');
  }
}

/** Pushed into the client's stream when the server says "caught up", so it sorts after every earlier event. */
const caughtUpMarker = Symbol('caughtUp');

function createEsdbSubscription(client: EventStoreDBClient, options: SubscribeOptions, headPosition: () => Promise<bigint | undefined>): Subscription {
  const { after: start, types, onEvent, onError } = options;
  let after = start;
  let closed = false;
  let markCaughtUp!: () => void;
  let failCaughtUp!: (error: unknown) => void;
  const caughtUp = new Promise<void>((resolve, reject) => {
    markCaughtUp = resolve;
    failCaughtUp = reject;
  });
  // A caller that never awaits caughtUp must not crash the process when the subscription fails.
  caughtUp.catch(() => undefined);

  const filter = types && types.length > 0 ? eventTypeFilter({ regex: eventTypeRegex(types) }) : excludeSystemEvents();
  const esdb: AllStreamSubscription = client.subscribeToAll({ fromPosition: toReadPosition(start), filter });

  // The server's CaughtUp message (ESDB ≥ 23.10) is emitted by the client while earlier events
  // may still sit unconsumed in the stream's buffer; a marker pushed at that moment is read
  // only after them, so caughtUp resolves once they were all handed to onEvent.
  esdb.on('caughtUp', () => esdb.push(caughtUpMarker));

  // Older servers send no CaughtUp: fall back to "delivered up to the head as it was at
  // start". If the newest events then are outside the filter this waits for a newer match.
  let fallbackHead: bigint | undefined | null = null;
  const checkFallback = () => {
    if (fallbackHead === null) return;
    if (fallbackHead === undefined || (after !== undefined && after >= fallbackHead)) markCaughtUp();
  };
  void headPosition()
    .then((head) => {
      fallbackHead = head;
      checkFallback();
    })
    .catch(() => undefined);

  const loop = (async () => {
    for await (const item of esdb as AsyncIterable<AllStreamResolvedEvent | typeof caughtUpMarker>) {
      if (closed) return;
      if (item === caughtUpMarker) {
        markCaughtUp();
        continue;
      }
      const position = item.event?.position.commit ?? item.commitPosition;
      if (position === undefined || !isAfter(position, after)) continue;
      const recorded = fromResolvedEvent(item, types);
      if (recorded) await onEvent(recorded);
      after = position;
      checkFallback();
    }
    if (!closed) throw new EventStoreUnavailable('EventStoreDB ended the subscription');
  })().catch((error: unknown) => {
    if (closed) return;
    closed = true;
    const translated = translateEsdbError(error, { operation: 'subscribe to $all' });
    failCaughtUp(translated);
    void esdb.unsubscribe().catch(() => undefined);
    onError?.(translated);
  });

  return {
    caughtUp,
    lastPosition: () => after,
    close: async () => {
      if (!closed) {
        closed = true;
        await esdb.unsubscribe().catch(() => undefined);
        // Cancelling the gRPC call does not end the client's stream; destroying it ends the loop.
        esdb.destroy();
      }
      await loop;
    },
  };
}
