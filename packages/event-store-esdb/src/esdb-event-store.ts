import { BACKWARDS, END, EventStoreDBClient, FORWARDS, START, type AllStreamResolvedEvent } from '@eventstore/db-client';
import type { RecordedEvent, TesseraEventType } from '@tessera/events';
import {
  EventStoreUnavailable,
  newEventId,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type SubscribeOptions,
  type Subscription,
} from '@tessera/event-store';
import { fromResolvedEvent, isAfter, isStreamNotFound, toEsdbExpectedRevision, toEventData, toReadPosition, translateEsdbError } from './esdb-mapping.js';
import { KnownHead, recordPosition, walkAll, type ReadAllPage, type WalkEnd, type WalkOptions } from './esdb-paging.js';
import { createEsdbSubscription } from './esdb-subscription.js';
import { InvalidArgument, InvariantBroken } from '@tessera/contracts';

export interface EsdbEventStoreOptions {
  /** `esdb://host:2113?tls=false` for a dev node, `esdb+discover://…` for a cluster. */
  readonly connectionString: string;
  /** readAll's page when the caller gives no maxCount; matches the SQLite adapter. */
  readonly defaultPageSize?: number;
  /** Most records one read of $all asks the server for. */
  readonly maxReadCount?: number;
  /**
   * Most records positionBefore (and a subscription's catch-up check on servers before 23.10)
   * walks back through before answering "from the start", which is never wrong, only slower.
   */
  readonly scanLimit?: number;
  /**
   * How long a subscription waits for the server's CaughtUp message (EventStoreDB ≥ 23.10)
   * before finding out for itself where the log ends, for older servers.
   */
  readonly caughtUpFallbackMs?: number;
}

/** The part of the client the adapter uses: tests hand it a double, without a server. */
export type EsdbClient = Pick<EventStoreDBClient, 'appendToStream' | 'readStream' | 'readAll' | 'subscribeToAll' | 'dispose'>;

/** Records beyond maxCount that an unfiltered readAll asks for: the one at `after` and a few system events. */
const readSlack = 16;
/** The first backwards read when looking for the newest event of ours: it is usually among the last few records. */
const firstBackwardsRead = 16;

/**
 * The production adapter: EventStoreDB over gRPC. Streams are named exactly as callers name
 * them, so `tokenfamily-…` and `account-…` are browsable in the ESDB UI and usable from its
 * projections. All translation rules live in esdb-mapping.ts.
 */
export class EsdbEventStore implements EventStore {
  private readonly client: EsdbClient;
  private readonly defaultPageSize: number;
  private readonly maxReadCount: number;
  private readonly scanLimit: number;
  private readonly caughtUpFallbackMs: number;
  private readonly subscriptions = new Set<Subscription>();
  private readonly head = new KnownHead();
  /** The head read in progress: concurrent callers (metric scrapes, the relay) share it. */
  private headRead: Promise<bigint | undefined> | undefined;
  private closed = false;

  constructor(options: EsdbEventStoreOptions, client?: EsdbClient) {
    this.client = client ?? EventStoreDBClient.connectionString(options.connectionString);
    this.defaultPageSize = options.defaultPageSize ?? 1000;
    this.maxReadCount = options.maxReadCount ?? 1000;
    this.scanLimit = options.scanLimit ?? 100_000;
    this.caughtUpFallbackMs = options.caughtUpFallbackMs ?? 3_000;
  }

  async append(stream: string, events: readonly NewEvent[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new InvalidArgument('append needs at least one event');
    const data = events.map((event) => toEventData(event, newEventId));
    const expectedRevision = toEsdbExpectedRevision(options.expectedRevision);
    try {
      const result = await this.client.appendToStream(stream, data, { expectedRevision });
      const position = result.position?.commit ?? (await this.positionOfRevision(stream, result.nextExpectedRevision));
      this.head.learn(position);
      return { nextExpectedRevision: result.nextExpectedRevision, position };
    } catch (error) {
      throw translateEsdbError(error, { stream, expected: options.expectedRevision, operation: `append to ${stream}` });
    }
  }

  /**
   * Only for servers that answer an idempotent retry without a position (before 22.x). The
   * retry's answer is the original append's, so the position is that of its last event — not
   * of the stream's last, which may have moved on since (docs/decisions/0007).
   */
  private async positionOfRevision(stream: string, revision: bigint): Promise<bigint> {
    const read = this.client.readStream(stream, { direction: FORWARDS, fromRevision: revision, maxCount: 1 });
    for await (const resolved of read) {
      const recorded = fromResolvedEvent(resolved);
      if (recorded?.revision === revision) return recorded.position;
    }
    throw new InvariantBroken(`append to ${stream} succeeded but revision ${revision} reads empty`);
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    if (options.maxCount === 0) return [];
    const read = this.client.readStream(stream, {
      direction: backwards ? BACKWARDS : FORWARDS,
      // Backwards from START would yield revision 0 alone.
      fromRevision: options.fromRevision ?? (backwards ? END : START),
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
    // The client's readAll has no server-side filter: system events and other types are dropped
    // here. A type filter may skip many records per match, so it reads in the largest pages.
    const filtered = options.types !== undefined && options.types.length > 0;
    const firstPage = filtered ? this.maxReadCount : Math.min(limit + readSlack, this.maxReadCount);
    await walkAll(this.readPage, { direction: FORWARDS, from: toReadPosition(options.after), firstPage, maxPage: this.maxReadCount }, (resolved) => {
      const recorded = fromResolvedEvent(resolved, options.types);
      if (recorded && isAfter(recorded.position, options.after)) out.push(recorded);
      return out.length < limit;
    });
    this.head.learn(out[out.length - 1]?.position);
    return out;
  }

  /**
   * The newest event of ours: read backwards from the end, but only down to the newest position
   * this process already knows (from its appends, subscriptions and reads), so a metrics scrape
   * reads what was written since the last one — usually one small read — not the whole log.
   */
  async headPosition(): Promise<bigint | undefined> {
    this.assertOpen();
    this.headRead ??= this.newestOurs({ floor: this.head.floor() })
      .then(({ position, top }) => {
        // Only now is everything from `top` down to the answer known to hold nothing newer of ours.
        this.head.learn(position);
        this.head.checked(top);
        return this.head.get();
      })
      .finally(() => {
        this.headRead = undefined;
      });
    return this.headRead;
  }

  /**
   * The newest event of ours recorded before the time. Walks back at most `scanLimit` records;
   * past that it answers undefined (read from the start): an earlier answer than the true one
   * only costs reading more, a later one would skip events, so it is never given.
   */
  async positionBefore(epochMs: number): Promise<bigint | undefined> {
    this.assertOpen();
    const { position } = await this.newestOurs({ accept: (recorded) => recorded.recordedAt < epochMs, scanLimit: this.scanLimit });
    return position;
  }

  /** A one-event read of $all: the server must answer, which is what every append needs too. */
  async probe(): Promise<void> {
    this.assertOpen();
    await this.readPage({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
  }

  /**
   * The one backwards walk past ESDB's own records (its $stats events every few seconds,
   * projections' links) behind headPosition, positionBefore and the subscription's catch-up
   * check: the position of the newest event readAll would show, of `types`, that `accept`s.
   * It stops early at `floor` (nothing at or below it is newer than what is known: the answer
   * is then undefined, for the caller to keep what it knows) and after `scanLimit` records (the
   * answer is undefined too, and `end` says 'limit': not "there is none" but "none found so
   * far"). `top` is the newest record it looked at.
   */
  private async newestOurs(search: {
    floor?: bigint | undefined;
    accept?: (recorded: RecordedEvent) => boolean;
    types?: readonly TesseraEventType[] | undefined;
    scanLimit?: number;
  }): Promise<{ position: bigint | undefined; end: WalkEnd; top: bigint | undefined }> {
    const { floor, accept, types, scanLimit } = search;
    let position: bigint | undefined;
    let top: bigint | undefined;
    const walk: WalkOptions = { direction: BACKWARDS, from: END, firstPage: firstBackwardsRead, maxPage: this.maxReadCount, ...(scanLimit === undefined ? {} : { scanLimit }) };
    const end = await walkAll(this.readPage, walk, (resolved) => {
      const at = recordPosition(resolved).commit;
      top ??= at;
      if (floor !== undefined && at <= floor) return false;
      const recorded = fromResolvedEvent(resolved, types);
      if (!recorded || (accept && !accept(recorded))) return true;
      position = at;
      return false;
    });
    return { position, end, top };
  }

  /** One bounded read of $all: the server ends the call after maxCount records, so nothing is left to cancel. */
  private readonly readPage: ReadAllPage = async ({ direction, fromPosition, maxCount }) => {
    const read = this.client.readAll({ direction, fromPosition, maxCount });
    // A late gRPC error on a read already finished must not surface as an uncaught 'error' event.
    read.on('error', () => undefined);
    const records: AllStreamResolvedEvent[] = [];
    try {
      for await (const resolved of read) records.push(resolved);
    } catch (error) {
      throw translateEsdbError(error, { operation: `read $all ${direction}` });
    }
    return records;
  };

  subscribeToAll(options: SubscribeOptions): Subscription {
    this.assertOpen();
    const subscription = createEsdbSubscription({
      options,
      open: ({ fromPosition, filter }) => this.client.subscribeToAll({ fromPosition, filter }),
      newestMatch: async (types) => {
        const { position, end } = await this.newestOurs({ types, scanLimit: this.scanLimit });
        // No match among the last scanLimit records: the newest event of ours is then one this
        // subscription does not see, so caughtUp waits for the next match (servers before 23.10 only).
        return end === 'limit' ? this.headPosition() : position;
      },
      fallbackAfterMs: this.caughtUpFallbackMs,
      learn: (position) => this.head.learn(position),
    });
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
