import type { EventMetadata, RecordedEvent, TesseraEvent, TesseraEventType } from '@tessera/events';
import { CodedError } from '@tessera/events';

/**
 * The EventStore port. Revisions are 0-based per stream and positions are global and
 * increasing; both are bigint because EventStoreDB's are. Every adapter passes
 * `eventStoreContract` unchanged.
 */
export type ExpectedRevision = 'no_stream' | 'any' | bigint;

export interface NewEvent {
  readonly event: TesseraEvent;
  readonly metadata?: EventMetadata;
  /**
   * Caller-chosen id makes a retried append recognisable; generated when absent. The same ids at
   * the same expected revision succeed again with the original result and write nothing; reuse
   * an id for nothing else (docs/decisions/0007).
   */
  readonly eventId?: string;
}

export interface AppendResult {
  /** Revision of the last event written: pass it as expectedRevision next time. */
  readonly nextExpectedRevision: bigint;
  /** Global position of the last event written. */
  readonly position: bigint;
}

export interface ReadStreamOptions {
  readonly direction?: 'forwards' | 'backwards';
  readonly maxCount?: number;
  /**
   * Where the read starts, inclusive, going in its direction: forwards from this revision, or
   * backwards from it. Omit to start at the stream's first event (forwards) or newest (backwards).
   */
  readonly fromRevision?: bigint;
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. Omit to read from the start. */
  readonly after?: bigint;
  readonly types?: readonly TesseraEventType[];
  readonly maxCount?: number;
}

export interface SubscribeOptions {
  /** Exclusive, like EventStoreDB's: delivery starts strictly after it. Omit for the start. */
  readonly after?: bigint;
  readonly types?: readonly TesseraEventType[];
  /** Called in log order, one at a time; a rejected promise stops the subscription. */
  readonly onEvent: (recorded: RecordedEvent) => void | Promise<void>;
  /**
   * Called once when the subscription ends by itself: with onEvent's own error unchanged, or
   * with EventStoreUnavailable when the store lost the connection or ended it. Nothing is
   * retried here; resubscribe `after: lastPosition()`. Never called for close().
   */
  readonly onError?: (error: unknown) => void;
}

/** Subscribing to a closed store throws EventStoreUnavailable at once. */
export interface Subscription {
  /**
   * Resolves once every event that existed when the subscription started was delivered;
   * rejects with the onError error if the subscription ends before that.
   */
  readonly caughtUp: Promise<void>;
  /**
   * Position of the last event handled — onEvent finished with it — or skipped by the filter;
   * `after` until then. Resuming after it neither loses nor repeats an event.
   */
  readonly lastPosition: () => bigint | undefined;
  /** Stops delivery and resolves once onEvent is not running; harmless twice. */
  close(): Promise<void>;
}

export interface EventStore {
  append(stream: string, events: readonly NewEvent[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult>;
  /** An absent stream reads as an empty list. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  subscribeToAll(options: SubscribeOptions): Subscription;
  /** Position of the newest event in the log, or undefined when the log is empty. */
  headPosition(): Promise<bigint | undefined>;
  /**
   * The position to read `after` so as to get every event recorded at or after `epochMs`:
   * that of the newest event recorded before it, or undefined when there is none. Lets a
   * projection that only needs recent history (the revocation projection) skip the rest.
   */
  positionBefore(epochMs: number): Promise<bigint | undefined>;
  /**
   * One real round trip that needs what an append needs (SQLite: a durable write outside the
   * log; EventStoreDB: a read from the server). Rejects with EventStoreUnavailable when the
   * store cannot take an append now; `guardAvailability` calls it to learn of a recovery.
   */
  probe(): Promise<void>;
  close(): Promise<void>;
  /** What a store that groups appends into commits (the embedded SQLite store) has done since it opened; absent elsewhere. */
  commitStats?(): CommitStats;
}

/**
 * A group-committing store's totals since it opened, for /metrics: the group size under load is
 * appends / commits; where a request waits is roundTripSeconds (handing a batch to the writer →
 * its answer) against commitSeconds (the writer's BEGIN → COMMIT, fsync included).
 */
export interface CommitStats {
  readonly commits: number;
  readonly appends: number;
  readonly commitSeconds: number;
  readonly roundTripSeconds: number;
}

export class ExpectedRevisionConflict extends CodedError {
  readonly code = 'ERR_EXPECTED_REVISION_CONFLICT';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, found ${String(actual)}`);
    this.name = 'ExpectedRevisionConflict';
  }
}

/** An append to a store opened for reading only (a command that inspects the log): a bug in whoever appended. */
export class EventStoreReadOnly extends CodedError {
  readonly code = 'ERR_EVENT_STORE_READ_ONLY';
}

/** An event that does not match its type's schema: refused before anything is written. */
export class InvalidEvent extends CodedError {
  readonly code = 'ERR_INVALID_EVENT';
}

export class EventStoreUnavailable extends CodedError {
  readonly code = 'ERR_EVENT_STORE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventStoreUnavailable';
  }
}

/**
 * Removing archived events from the hot store (docs/decisions/0017): the part of a store that only
 * the archiver uses, opened apart from the EventStore (`openLogRetention` in the factory).
 */
export interface LogRetention {
  /**
   * Removes the events at `positions` of each stream; `truncateBefore` is the revision of the first
   * event the stream keeps (EventStoreDB truncates by revision; SQLite deletes by position, and
   * only where that position holds that stream's event).
   */
  remove(removals: readonly LogRemoval[]): Promise<void>;
  /** Gives the space removed events held back to the file system, where the store can (SQLite: incremental vacuum). */
  reclaim(): Promise<void>;
  /** Bytes the hot store takes on this machine (SQLite: the file and its WAL); undefined when it lives elsewhere. */
  bytesOnDisk(): number | undefined;
  close(): Promise<void>;
}

export interface LogRemoval {
  readonly stream: string;
  readonly positions: readonly bigint[];
  readonly truncateBefore: bigint;
}
