import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { InvalidArgument, TesseraEvent, type EventMetadata, type RecordedEvent, type TesseraEventType } from '@tessera/events';
import {
  EventStoreReadOnly,
  EventStoreUnavailable,
  ExpectedRevisionConflict,
  InvalidEvent,
  newEventId,
  type AppendResult,
  type CommitStats,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type SubscribeOptions,
  type Subscription,
} from '@tessera/event-store';
import { ownerOnlySqliteFile, ownerOnlySqliteSidecars } from './sqlite-file.js';
import { schema } from './sqlite-schema.js';
import { createSqliteSubscription, type LiveTail } from './sqlite-subscription.js';
import { writerThreadEntry } from './sqlite-writer-entry.js';
import type { ProbeReply, WriterAppend, WriterData, WriterReply, WriterRequest } from './sqlite-writer-protocol.js';
import { systemClock, type Clock } from '@tessera/timing';

export interface SqliteEventStoreOptions {
  /** Path of the database file; its folder is created. */
  readonly file: string;
  /** How often subscriptions look for events written by other processes. */
  readonly pollIntervalMs?: number;
  /** For `recordedAt`; default the system's. */
  readonly clock?: Clock;
  /**
   * A reader only (the audit index's thread): no writer thread is started, append refuses, and
   * probe() reads instead of writing.
   */
  readonly readOnly?: boolean;
}

interface PendingAppend {
  readonly stream: string;
  readonly events: readonly NewEvent[];
  readonly expectedRevision: ExpectedRevision;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
}

/** Rows come back as arrays, in rowColumns order: on a rebuild that is ~40% cheaper than objects. */
type EventRow = [position: number, eventId: string, stream: string, revision: number, payload: string, metadata: string, recordedAt: number];

/** Rows per read: large enough that a rebuild of a million events is a few hundred queries. */
const pageSize = 5000;
/**
 * A subscription reads smaller pages than readAll: each page is read in one synchronous call, and
 * a catch-up gives the event loop a turn between slices of a few milliseconds (a page of 500 reads
 * in about 2 ms).
 */
const subscriptionPageSize = 500;
const rowColumns = 'position, event_id, stream, revision, payload, metadata, recorded_at';
/**
 * The most rows one scan of the live tail reads: what a few commits add. A longer tail (a
 * backlog, another process's bulk write) is read by type, along the index, as a catch-up is.
 */
const liveTailRows = 256;
/**
 * Each connection's page cache, in KiB (SQLite's default, about 2 MB). better-sqlite3 builds
 * SQLite with 16 MB per connection (SQLITE_DEFAULT_CACHE_SIZE=-16000), and the writer thread's
 * cache keeps every page it writes, as no other connection's commit empties it: it grows with the
 * log, about 15 MB in two minutes of mixed load at 1,000 requests a second, and at a lighter load
 * as slowly as the log does, for hours. The reader's is emptied whenever the writer commits, so a larger one
 * buys nothing while the log is written. A page that is not cached is read from the OS's file
 * cache, which holds the log's hot pages for every connection at once.
 */
const cacheKiB = 2048;

/**
 * The most turns of the event loop a batch gathers for before it goes to an idle writer thread.
 * Each commit costs the writer thread about 130 µs of CPU and the request thread a wake-up, and
 * on a core the request thread shares, that CPU is what light load is short of: gathering over a
 * few turns makes fewer, larger commits (about a tenth less CPU per issuance at 10 connections),
 * while a lone append still waits only a few microseconds. Two turns gained less, and not every
 * time.
 */
const gatherTurns = 3;

/** A row of the tail scan: where an event is, and its type. */
type TailRow = [position: number, type: string];

/**
 * The embedded adapter. Durable on commit (WAL, synchronous=FULL). Appends that arrive in the
 * same few turns of the event loop share one transaction and one fsync (group commit); a
 * conflict or failure in one does not fail the others (sqlite-writer-worker.ts).
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly now: () => number;
  private readonly pollIntervalMs: number;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  /** The batch the writer thread is committing; the next one gathers in `queue` meanwhile. */
  private inFlight: { id: number; batch: PendingAppend[]; postedAt: number } | undefined;
  private readonly stats = { commits: 0, appends: 0, commitSeconds: 0, roundTripSeconds: 0 };
  private nextBatchId = 0;
  private readonly file: string;
  /** Undefined for a read-only store. */
  private writer: Worker | undefined;
  private readonly readOnly: boolean;
  /** Set when the writer thread died; the next append or probe starts a new one. */
  private writerFailure: Error | undefined;
  private readonly probes = new Map<number, { resolve: () => void; reject: (error: unknown) => void }>();
  private drained: (() => void) | undefined;
  private closed = false;
  private readonly wakers = new Set<() => void>();
  private readonly subscriptions = new Set<Subscription>();
  /** Several reads that must see one state of the log run in one read transaction. */
  private readonly snapshot: <T>(read: () => T) => T;
  private readonly statements;

  constructor(options: SqliteEventStoreOptions) {
    // The log is every account's history: only the service's user may read it. The file is 0600
    // before SQLite opens it, so the -wal and -shm SQLite makes take its mode; files an older
    // release left with the umask's mode are tightened, by path only (sqlite-file.ts says why a
    // descriptor of the log is never opened here). A folder we make is 0700; one the operator
    // named (sqlite:<file>) is theirs and left alone.
    mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
    ownerOnlySqliteFile(options.file);
    this.db = new Database(options.file);
    // A new log gives archived events' space back to the file system (SqliteLogRetention.reclaim);
    // on a file that already has tables this changes nothing, as SQLite allows it only before the first.
    if (!options.readOnly) this.db.pragma('auto_vacuum = INCREMENTAL');
    this.db.pragma('journal_mode = WAL');
    ownerOnlySqliteSidecars(options.file);
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma(`cache_size = -${cacheKiB}`);
    this.db.exec(schema);
    this.now = () => (options.clock ?? systemClock).now();
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    // One transaction function, made once: better-sqlite3 builds a new wrapper for each
    // transaction() call, and the live tail is read after every commit.
    const readTransaction = this.db.transaction((read: () => unknown) => read());
    // Cast: the transaction function returns what `read` returns; its type is erased to unknown.
    this.snapshot = <T>(read: () => T): T => readTransaction(read) as T;
    this.file = options.file;
    this.readOnly = options.readOnly === true;
    this.writer = this.readOnly ? undefined : this.startWriter();
    // Parameters that the planner may read are written (SELECT ?): a LIMIT, and a value compared
    // with an indexed column (better-sqlite3 builds SQLite with STAT4). SQLite prepares a statement
    // with a bare one again at every run, as another value might want another plan: 6.5 µs more
    // per stream read, 4 µs more per live-tail read. As a constant subquery the
    // plan stays, and still uses the index. sqlite-statements.int.test.ts holds every statement
    // to it and checks the plans.
    this.statements = {
      forwards: this.db.prepare<[string, number], EventRow>(`SELECT ${rowColumns} FROM events WHERE stream = (SELECT ?) ORDER BY revision ASC LIMIT (SELECT ?)`).raw(true),
      backwards: this.db.prepare<[string, number], EventRow>(`SELECT ${rowColumns} FROM events WHERE stream = (SELECT ?) ORDER BY revision DESC LIMIT (SELECT ?)`).raw(true),
      forwardsFrom: this.db.prepare<[string, number, number], EventRow>(`SELECT ${rowColumns} FROM events WHERE stream = (SELECT ?) AND revision >= (SELECT ?) ORDER BY revision ASC LIMIT (SELECT ?)`).raw(true),
      backwardsFrom: this.db.prepare<[string, number, number], EventRow>(`SELECT ${rowColumns} FROM events WHERE stream = (SELECT ?) AND revision <= (SELECT ?) ORDER BY revision DESC LIMIT (SELECT ?)`).raw(true),
      // The highest position ever handed out (AUTOINCREMENT's counter), not the highest still in the
      // log: archiving may remove the newest events of an idle log, and the head must not go back.
      head: this.db.prepare<[], { position: number | null }>(
        "SELECT NULLIF(MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), COALESCE((SELECT MAX(position) FROM events), 0)), 0) AS position",
      ),
      all: this.db.prepare<[number, number], EventRow>(`SELECT ${rowColumns} FROM events WHERE position > (SELECT ?) ORDER BY position ASC LIMIT (SELECT ?)`).raw(true),
      tail: this.db.prepare<[number, number], TailRow>('SELECT position, type FROM events WHERE position > (SELECT ?) ORDER BY position ASC LIMIT (SELECT ?)').raw(true),
      at: this.db.prepare<[number], EventRow>(`SELECT ${rowColumns} FROM events WHERE position = (SELECT ?)`).raw(true),
      ofType: this.db
        .prepare<[string, number, number], EventRow>(`SELECT ${rowColumns} FROM events WHERE type = (SELECT ?) AND position > (SELECT ?) ORDER BY position ASC LIMIT (SELECT ?)`)
        .raw(true),
      // MIN(position), not the first row by recorded_at: the two orders differ when processes sharing the file record out of order.
      firstAt: this.db.prepare<[number], { position: number | null }>('SELECT MIN(position) AS position FROM events WHERE recorded_at >= (SELECT ?)'),
    };
  }

  /**
   * Commits (and their fsync) happen on a thread of their own: while one batch is being made
   * durable, the event loop keeps taking requests and the next batch gathers.
   */
  private startWriter(): Worker {
    const entry = writerThreadEntry();
    const writer = new Worker(entry.url, { workerData: { file: this.file, cacheKiB } satisfies WriterData, execArgv: entry.execArgv });
    writer.unref();
    writer.on('message', (reply: WriterReply | ProbeReply) => ('probed' in reply || this.probes.has(reply.id) ? this.settleProbe(reply) : this.settle(reply)));
    // Only the current thread's end matters: a replaced one may report its exit late.
    writer.on('error', (error) => writer === this.writer && this.failWriter(error));
    writer.on('exit', (code) => writer === this.writer && this.failWriter(new Error(`the SQLite writer thread exited (${code})`)));
    return writer;
  }

  /** A writer thread that died is replaced on the next append or probe: the store heals without a restart. */
  private ensureWriter(): Worker {
    if (this.readOnly) throw new EventStoreReadOnly('this SQLite event store was opened read-only');
    if (this.writerFailure && !this.closed) {
      this.writerFailure = undefined;
      this.writer = this.startWriter();
    }
    // Set at construction for a store that writes, and replaced just above when it died.
    return this.writer!;
  }

  append(stream: string, events: readonly NewEvent[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new EventStoreUnavailable('event store is closed'));
    if (this.readOnly) return Promise.reject(new EventStoreReadOnly('this SQLite event store was opened read-only'));
    this.ensureWriter();
    if (events.length === 0) return Promise.reject(new InvalidArgument('append needs at least one event'));
    for (const { event } of events) {
      const checked = TesseraEvent.safeParse(event);
      if (!checked.success) return Promise.reject(new InvalidEvent(`invalid ${event.type} event: ${checked.error.message}`));
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ stream, events, expectedRevision: options.expectedRevision, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        this.gather(1, 0);
      }
    });
  }

  /**
   * Sends the queue at the first turn of the event loop that brings no new append, and at the
   * latest at turn `gatherTurns`. A turn with an immediate pending polls its sockets without
   * waiting, so this waits for no new request: it lets requests that have already arrived reach
   * the same commit, where a batch sent at the first turn carried about two at 10 connections.
   */
  private gather(turn: number, seen: number): void {
    setImmediate(() => {
      if (turn >= gatherTurns || this.queue.length === seen) this.flush();
      else this.gather(turn + 1, this.queue.length);
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.inFlight || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    const id = (this.nextBatchId += 1);
    this.inFlight = { id, batch, postedAt: performance.now() };
    const recordedAt = this.now();
    const appends = batch.map(({ stream, events, expectedRevision }): WriterAppend => ({
      stream,
      expected: typeof expectedRevision === 'bigint' ? expectedRevision.toString() : expectedRevision,
      recordedAt,
      rows: events.map(({ event, metadata, eventId }) => [eventId ?? newEventId(), event.type, JSON.stringify(event), JSON.stringify(metadata ?? {})]),
    }));
    // Keep the process alive while a write is pending; idle, the thread must not hold it open.
    const writer = this.ensureWriter();
    writer.ref();
    writer.postMessage({ id, appends } satisfies WriterRequest);
  }

  private settle(reply: WriterReply): void {
    const inFlight = this.inFlight;
    if (!inFlight || inFlight.id !== reply.id) return;
    this.inFlight = undefined;
    if (this.probes.size === 0) this.writer?.unref();
    if ('results' in reply) {
      this.stats.commits += 1;
      this.stats.appends += inFlight.batch.length;
      this.stats.commitSeconds += reply.commitMs / 1000;
      this.stats.roundTripSeconds += (performance.now() - inFlight.postedAt) / 1000;
    }
    inFlight.batch.forEach((pending, index) => {
      if ('unavailable' in reply) {
        pending.reject(new EventStoreUnavailable(reply.unavailable));
        return;
      }
      const result = reply.results[index]!;
      if ('ok' in result) {
        pending.resolve({ nextExpectedRevision: BigInt(result.ok.revision), position: BigInt(result.ok.position) });
      } else if ('conflict' in result) {
        const actual = result.conflict.actual === 'no_stream' ? 'no_stream' : BigInt(result.conflict.actual);
        pending.reject(new ExpectedRevisionConflict(pending.stream, pending.expectedRevision, actual));
      } else {
        pending.reject(translateFailure(result.failed, pending));
      }
    });
    // Only now is the batch durable and answered: wake local readers, then send what gathered meanwhile.
    for (const wake of this.wakers) wake();
    if (this.queue.length > 0) this.flush();
    else this.drained?.();
  }

  private failWriter(error: Error): void {
    if (this.writerFailure || this.closed) return;
    this.writerFailure = error;
    const pending = [...(this.inFlight?.batch ?? []), ...this.queue];
    this.inFlight = undefined;
    this.queue = [];
    // Whether the batch in flight reached the disk is unknown: its callers get a 503, never a 200.
    for (const append of pending) append.reject(new EventStoreUnavailable('the SQLite writer thread stopped', { cause: error }));
    for (const probe of this.probes.values()) probe.reject(new EventStoreUnavailable('the SQLite writer thread stopped', { cause: error }));
    this.probes.clear();
    this.drained?.();
  }

  /** Totals since the store opened (a copy): commits made, appends they carried, and where the time went. */
  commitStats(): CommitStats {
    return { ...this.stats };
  }

  probe(): Promise<void> {
    if (this.closed) return Promise.reject(new EventStoreUnavailable('event store is closed'));
    if (this.readOnly) {
      // A reader's round trip is a read: what it needs of the file.
      try {
        this.statements.head.get();
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(new EventStoreUnavailable(`reading the SQLite log failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
      }
    }
    const writer = this.ensureWriter();
    const id = (this.nextBatchId += 1);
    return new Promise<void>((resolve, reject) => {
      this.probes.set(id, { resolve, reject });
      writer.ref();
      writer.postMessage({ id, probe: true } satisfies WriterRequest);
    });
  }

  private settleProbe(reply: WriterReply | ProbeReply): void {
    const probe = this.probes.get(reply.id);
    if (!probe) return;
    this.probes.delete(reply.id);
    if (!this.inFlight && this.probes.size === 0) this.writer?.unref();
    if ('unavailable' in reply) probe.reject(new EventStoreUnavailable(reply.unavailable));
    else probe.resolve();
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    const limit = options.maxCount ?? -1;
    if (options.fromRevision !== undefined) {
      const statement = backwards ? this.statements.backwardsFrom : this.statements.forwardsFrom;
      return statement.all(stream, Number(options.fromRevision), limit).map(toRecorded);
    }
    const statement = backwards ? this.statements.backwards : this.statements.forwards;
    return statement.all(stream, limit).map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    return this.readAllNow(options);
  }

  /**
   * Synchronous read used by subscriptions, so a page is one consistent snapshot. With a type
   * filter each type is read along its (type, position) index — already in log order — and
   * the lists are merged here: `type IN (…)` would make SQLite sort every page.
   */
  readAllNow(options: ReadAllOptions): RecordedEvent[] {
    const after = Number(options.after ?? 0n);
    const limit = options.maxCount ?? pageSize;
    const types = options.types ?? [];
    if (types.length === 0) return this.statements.all.all(after, limit).map(toRecorded);
    const read = () => {
      const lists = types.map((type) => this.statements.ofType.all(type, after, limit));
      if (lists.length === 1) return lists[0]!;
      // Only positions up to the lowest last position of any full list are known to be complete.
      let complete = Infinity;
      for (const list of lists) if (list.length === limit) complete = Math.min(complete, list[list.length - 1]![0]);
      return lists
        .flat()
        .filter((row) => row[0] <= complete)
        .sort((a, b) => a[0] - b[0])
        .slice(0, limit);
    };
    return this.snapshot(read).map(toRecorded);
  }

  /**
   * A caught-up subscription's read: the positions and types after `after` in one scan along the
   * positions (one query, whatever the number of types), filtered by type here, then the whole row
   * of each wanted one by its position, in the same read transaction. Per type along its index
   * costs a query per type on every wake — ~150 µs for the dozen types `tessera start` follows,
   * after every commit, though a commit rarely holds more than one or two of them (measured under
   * load). The scan reads no payload: a commit of issuances holds none of the types the server's
   * read models follow, and copying each row's payload and metadata into strings only to drop them
   * cost each subscription several µs per event.
   * Undefined when the tail holds more rows than one scan reads: the caller reads by type.
   */
  readLiveTail(after: bigint | undefined, types: readonly TesseraEventType[]): LiveTail | undefined {
    const { tail, at } = this.statements;
    return this.snapshot(() => {
      const rows = tail.all(Number(after ?? 0n), liveTailRows);
      if (rows.length === liveTailRows) return undefined;
      const wanted = new Set<string>(types);
      const events: RecordedEvent[] = [];
      for (const [position, type] of rows) {
        if (!wanted.has(type)) continue;
        const row = at.get(position);
        // The log only grows at its end, and this read transaction holds the state the scan saw.
        if (row) events.push(new SqliteRecordedEvent(row));
      }
      return { events, readTo: rows.length === 0 ? after : BigInt(rows[rows.length - 1]![0]) };
    });
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    this.assertOpen();
    const subscription = createSqliteSubscription({
      options,
      readPage: (after: bigint | undefined, types: readonly TesseraEventType[] | undefined) =>
        this.readAllNow({ after, types, maxCount: subscriptionPageSize }),
      readLiveTail: (after, types) => this.readLiveTail(after, types),
      pageSize: subscriptionPageSize,
      pollIntervalMs: this.pollIntervalMs,
      registerWaker: (wake) => {
        this.wakers.add(wake);
        return () => this.wakers.delete(wake);
      },
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

  async headPosition(): Promise<bigint | undefined> {
    this.assertOpen();
    const position = this.statements.head.get()?.position;
    return position === null || position === undefined ? undefined : BigInt(position);
  }

  /**
   * Makes the next event's position come after `position`: a log restored from an older copy,
   * beside a newer archive that already gives later positions to archived events, must not hand
   * them out again. Does nothing when the log is already past it.
   */
  async reservePositionsThrough(position: bigint): Promise<void> {
    this.assertOpen();
    const through = Number(position);
    this.db.transaction(() => {
      this.db.prepare("INSERT INTO sqlite_sequence (name, seq) SELECT 'events', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events')").run();
      this.db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'events' AND seq < ?").run(through, through);
    }).immediate();
  }

  /** One before the smallest position recorded at or after the time, so reading after it misses none of them. */
  async positionBefore(epochMs: number): Promise<bigint | undefined> {
    this.assertOpen();
    const first = this.statements.firstAt.get(epochMs)?.position;
    if (first === null || first === undefined) return this.headPosition();
    return first > 1 ? BigInt(first - 1) : undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    // Let what was accepted reach the disk before the writer goes.
    if (this.inFlight || this.queue.length > 0) {
      const drained = new Promise<void>((resolve) => (this.drained = resolve));
      this.flush();
      await drained;
    }
    for (const probe of this.probes.values()) probe.reject(new EventStoreUnavailable('event store is closed'));
    this.probes.clear();
    this.writer?.removeAllListeners('exit');
    await this.writer?.terminate();
    this.db.close();
  }

  /** A closed database would answer with a TypeError; the port's answer is a typed outage. */
  private assertOpen(): void {
    if (this.closed) throw new EventStoreUnavailable('event store is closed');
  }
}

/**
 * A row as the port's RecordedEvent. A class, so the lazy metadata getter lives on the
 * prototype: an object literal with an accessor is several times slower to create, and a
 * rebuild creates a million of these.
 */
class SqliteRecordedEvent implements RecordedEvent {
  readonly eventId: string;
  readonly stream: string;
  readonly revision: bigint;
  readonly position: bigint;
  readonly event: TesseraEvent;
  readonly recordedAt: number;
  private readonly metadataJson: string;
  private parsedMetadata: EventMetadata | undefined;

  constructor([position, eventId, stream, revision, payload, metadataJson, recordedAt]: EventRow) {
    this.eventId = eventId;
    this.stream = stream;
    this.revision = BigInt(revision);
    this.position = BigInt(position);
    // The log is written only through append(), which validated each payload.
    this.event = JSON.parse(payload) as TesseraEvent;
    this.recordedAt = recordedAt;
    this.metadataJson = metadataJson;
  }

  /** Projections rarely read metadata: it is parsed when first asked for. */
  get metadata(): EventMetadata {
    this.parsedMetadata ??= JSON.parse(this.metadataJson) as EventMetadata;
    return this.parsedMetadata;
  }
}

const toRecorded = (row: EventRow): RecordedEvent => new SqliteRecordedEvent(row);

function translateFailure(failure: { code: string; message: string }, pending: PendingAppend): Error {
  // The unique (stream, revision) index is the last line of defence against a concurrent writer.
  if (failure.code === 'SQLITE_CONSTRAINT_UNIQUE' || failure.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return new ExpectedRevisionConflict(pending.stream, pending.expectedRevision, 'no_stream');
  }
  return new EventStoreUnavailable(`append failed: ${failure.code}: ${failure.message}`);
}

