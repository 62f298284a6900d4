import { isEventOf, ssfStreamEventTypes, ssfStreams, type RecordedEvent, type TesseraEventType } from '@tessera/events';
import type { EventStore } from '@tessera/event-store';
import { Retry, systemScheduler, type Clock, type RetryLogger, type Scheduler } from '@tessera/timing';
import { Broadcast } from '../broadcast.js';
import { secondsToWait } from '../minimum-interval.js';
import { SsfEmptyPollTooSoon } from '../ssf-errors.js';
import type { HeaderSeal } from '../sealed-header.js';
import { setFor, signalEventTypes, type SetClaims } from '../set-mapping.js';
import { signSet, type SetKeyring } from '../set-signer.js';
import { evolveStream, initialStreamState, snapshotReadBack, startsStreamFold, type LiveStream, type StreamState } from '../stream-decider.js';
import { audienceOf } from '../stream-management.js';
import type { DeliveryCheckpoints } from './delivery-checkpoints.js';
import { droppedErrorCodes, type PushClient } from './push-client.js';
import type { RetentionHorizon } from './retention.js';

/** A SET waiting for its receiver: delivered in log order, one at a time. */
export interface PendingSet {
  readonly position: bigint;
  readonly claims: SetClaims;
  /** When the log recorded its event, epoch ms: the age of the oldest is the figure to alert on. */
  readonly recordedAt: number;
  /** The SET as last signed: sent again as it is while the key and the audience are the same. */
  signed?: { readonly kid: string; readonly aud: string; readonly jwt: string };
  /** When a poll last answered it (the clock's ms): held back from the next polls until the acknowledgment deadline has passed. */
  answeredAt?: number;
}

/**
 * Most time one poll spends signing SETs not signed before, on the request thread: past it the
 * answer holds what is signed and says `moreAvailable`. A SET is signed once, so what a receiver
 * polls again without acknowledging costs nothing more.
 */
export const pollSigningBudgetMs = 10;

/**
 * Most bytes of SETs one poll answers (at least one SET): about 90 revocation SETs. Past it the
 * answer says `moreAvailable` (RFC 8936 lets a transmitter return fewer than `maxEvents`). A bound
 * on what each answer allocates and writes keeps every answer a short slice of the request thread
 * and its buffers out of the heap's large-object space: 1,000 SETs in one answer (700 KB) from
 * receivers polling back to back made token issuance wait on full garbage collections.
 */
export const pollAnswerBudgetBytes = 64 * 1024;

/**
 * How long after a signing-key rotation a receiver's `invalid_request` is taken for a stale key
 * cache (retried, then the stream paused) rather than a malformed SET (dropped). JWKS caches
 * commonly hold keys for 5 to 10 minutes (PyJWT's PyJWKClient: 300 s).
 */
export const keyRotationGraceMs = 15 * 60_000;

/** The SETs a stream has dropped since the process started: what its status shows. */
export interface Drops {
  readonly count: number;
  readonly last?: { readonly jti: string; readonly err: string; readonly at: number };
}

/** A receiver's report of a SET it could not process (RFC 8936 setErrs, RFC 8935's error body). */
export interface SetError {
  readonly err: string;
  readonly description?: string | undefined;
}

/** What a catching-up stream reads of the log: its signals and every stream's management events. */
export const catchUpTypes: readonly TesseraEventType[] = [...new Set<TesseraEventType>([...signalEventTypes, ...ssfStreamEventTypes])];

/**
 * How a worker learns what its stream is now (the transmitter folds the log's head for every
 * stream). One for every worker, asked by stream: nothing of it is held per stream.
 */
export interface StreamNow {
  /** The stream at the head of the log, or undefined once deleted. */
  stream(streamId: string): LiveStream | undefined;
  receiverActive(receiverId: string): boolean;
  /** The position the transmitter has handed out up to: a catching-up stream is live once it has read that far. */
  handedOutTo(): bigint | undefined;
  /** Set when the transmitter paused the stream because it fell behind retention: delivery resumes after it. */
  skippedTo(streamId: string): bigint | undefined;
}

/** What every worker shares (one object for all of them): per-stream calls name their stream. */
export interface StreamWorkerDeps {
  readonly store: Pick<EventStore, 'readAll' | 'readStream'>;
  readonly keyring: SetKeyring;
  readonly seal: HeaderSeal;
  readonly issuer: () => string;
  readonly checkpoints: DeliveryCheckpoints;
  readonly retention: RetentionHorizon;
  /** A stream's own connection to its receiver, made at its first push. */
  readonly pushClient: () => PushClient;
  readonly clock: Clock;
  /** Where the retries' waits and the pause's wait run; default the machine's timers. */
  readonly scheduler?: Scheduler;
  readonly logger: RetryLogger & { error(fields: Record<string, unknown>, message: string): void };
  /** How long delivery may keep failing before the transmitter pauses the stream (ms). */
  readonly pauseAfterMs: number;
  /** How long a polled SET that was answered and not acknowledged is held back from the next polls (ms); default 0, answered again at once. */
  readonly ackDeadlineMs?: number;
  /**
   * Least time between two polls of a stream that return at once, acknowledge nothing and answer
   * nothing (ms); default 0, no limit. One sooner is refused (SsfEmptyPollTooSoon).
   */
  readonly emptyPollIntervalMs?: number;
  /** False while this replica may not deliver (the delivery lease lapsed or was taken over): checked right before each push. */
  readonly mayDeliver?: () => boolean;
  /** The transmitter's own pause: an SsfStreamStatusChanged appended by the transmitter. */
  readonly pause: (streamId: string, receiverId: string, reason: string, skippedTo?: bigint) => Promise<void>;
  readonly counters: { delivered(streamId: string): void; failed(streamId: string): void; paused(streamId: string): void; dropped(streamId: string): void };
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** Most SETs held in memory; past it the stream stops taking what the transmitter hands out and reads the log itself. */
  readonly queueCap?: number;
  readonly pageSize?: number;
}

type Mode = 'dormant' | 'catching-up' | 'live' | 'behind';

/**
 * One stream's delivery, apart from every other stream's: its own queue, cursor, checkpoint,
 * retries and connection. While it keeps up, the transmitter hands it each new event of the log
 * (one read of the log for every stream); when it has fallen behind (after a start, a pause, a
 * slow receiver) it reads the log itself from where it is, then joins again. So a dead receiver
 * holds no other stream back, and nothing it missed is lost: the log is the queue.
 *
 * Events reach a stream in log order; its subjects and its disabled spells are folded as of each
 * event's position, so a SET goes out for a subject only while the stream followed it, and nothing
 * that happened while the stream was disabled is held for it (SSF 1.0 section 8.1.2.1). Paused
 * is held: delivered once the stream is enabled again.
 *
 * An idle stream holds little: its fold and its cursor. Its loop runs only while there is
 * something to do (SETs to push, the log to read) and ends when there is not; a queued SET, a
 * change of the stream or an acknowledgment starts it again. What only delivery needs (its
 * retries, its connection, its abort signal, its long polls' wake-up) is made when first needed.
 */
export class StreamWorker {
  private mode: Mode = 'dormant';
  /** The last position taken into the fold (and the queue): nothing at or before it is read again. */
  private cursor: bigint | undefined;
  private fold: StreamState = initialStreamState();
  private readonly queue: PendingSet[] = [];
  /** What was handed out while a page was being read: joined after the page, if none was dropped. */
  private side: RecordedEvent[] = [];
  private sideOverflow = false;
  private stopped = false;
  private pausing = false;
  /** True from the loop's start until it ends, idle or stopped: a kick while it runs finds it re-checking before it ends. */
  private running = false;
  /** Wakes long polls when a SET arrives. */
  private arrivals: Broadcast | undefined;
  /** Aborts a push, a retry's wait or a long poll when the stream changes. */
  private aborting: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private pushing: Retry | undefined;
  /** Reading the log while it is unavailable: apart from the pushes' failures, which can pause the stream. */
  private readingLog: Retry | undefined;
  private connection: PushClient | undefined;
  private dropCount = 0;
  private lastDelivered: number | undefined;
  private lastDrop: Drops['last'];
  /** When a poll of this stream that returned at once and acknowledged nothing last answered no SET (the clock's ms): the empty-poll interval counts from it. */
  private lastEmptyAnswerAt: number | undefined;

  constructor(
    readonly streamId: string,
    readonly receiverId: string,
    private readonly now: StreamNow,
    private readonly deps: StreamWorkerDeps,
    /** Where a stream that has no checkpoint starts: after its SsfStreamCreated. */
    readonly createdAt: bigint,
  ) {}

  private get scheduler(): Scheduler {
    return this.deps.scheduler ?? systemScheduler;
  }

  private get queueCap(): number {
    return this.deps.queueCap ?? 10_000;
  }

  private get pageSize(): number {
    return this.deps.pageSize ?? 500;
  }

  private get arrived(): Broadcast {
    return (this.arrivals ??= new Broadcast(this.scheduler));
  }

  private get abort(): AbortController {
    return (this.aborting ??= new AbortController());
  }

  private get retry(): Retry {
    return (this.pushing ??= new Retry({
      backoff: this.deps.backoff ?? { initialMs: 250, maxMs: 30_000 },
      clock: this.deps.clock,
      log: {
        logger: this.deps.logger,
        failing: 'a Shared Signals push failed; retrying',
        recovered: 'a Shared Signals stream delivers again',
        fields: () => ({ stream_id: this.streamId, pending: this.queue.length }),
      },
    }));
  }

  private get reading(): Retry {
    return (this.readingLog ??= new Retry({
      backoff: { initialMs: 250, maxMs: 5_000 },
      clock: this.deps.clock,
      log: { logger: this.deps.logger, failing: 'a Shared Signals stream could not read the event log; retrying', recovered: 'a Shared Signals stream reads the event log again', fields: () => ({ stream_id: this.streamId }) },
    }));
  }

  /** Nothing was failing: a retry not made yet has nothing to recover from. */
  private succeeded(retry: Retry | undefined): void {
    retry?.succeeded();
  }

  /** Closes the stream's connection to its receiver, if it made one. */
  closeConnection(): void {
    this.connection?.close();
    this.connection = undefined;
  }

  /** A stream made while the transmitter runs: live from its creation on, nothing to read back. */
  startLive(created: StreamState, position: bigint): void {
    this.fold = created;
    this.cursor = position;
    this.mode = 'live';
    this.kick();
  }

  /** A stream found at start: reads the log from its checkpoint. */
  startBehind(): void {
    this.kick();
  }

  /** The stream's status, its receiver or its configuration changed: look again. */
  reconsider(): void {
    this.aborting?.abort();
    this.aborting = undefined;
    this.kick();
  }

  /**
   * Starts the loop unless it runs. A running loop needs no signal: it reads the queue and the
   * stream again, synchronously, after every step, before it ends.
   */
  private kick(): void {
    if (this.stopped || this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.reconsider();
    this.arrivals?.wake();
    await this.loop;
  }

  /** A new event of the log, handed out by the transmitter in order. */
  offer(recorded: RecordedEvent): void {
    if (this.cursor !== undefined && recorded.position <= this.cursor) return;
    if (this.mode === 'catching-up') {
      if (this.side.length < this.queueCap) this.side.push(recorded);
      else this.sideOverflow = true;
      return;
    }
    if (this.mode !== 'live') return;
    // Most events are not this stream's: only a queued SET wakes its loop.
    if (!this.take(recorded)) return;
    if (this.queue.length >= this.queueCap) this.mode = 'behind';
    this.kick();
  }

  /** While nothing is pending, the checkpoint follows what was read, so a restart reads less again (called now and then, not per event). */
  checkpointIdle(): void {
    if (this.mode === 'live' && this.queue.length === 0) this.saveCheckpoint();
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Age of the oldest SET not yet delivered, ms; 0 when none. */
  oldestPendingMs(): number {
    const oldest = this.queue[0];
    return oldest ? Math.max(0, this.deps.clock.now() - oldest.recordedAt) : 0;
  }

  get isPoll(): boolean {
    return this.now.stream(this.streamId)?.configuration.delivery.method === 'poll';
  }

  /**
   * RFC 8936: acknowledges what the receiver names (ack, and setErrs, which are not sent again),
   * then answers up to `maxEvents` SETs from the oldest unacknowledged one, waiting up to `waitMs`
   * for one when none is there. What is answered and not acknowledged is answered again once the
   * acknowledgment deadline has passed: until then the next polls answer the SETs after it, or
   * wait, so a receiver that never acknowledges is not answered the same SETs as fast as it asks.
   * A poll that returns at once, acknowledges nothing and has nothing to answer is refused
   * (SsfEmptyPollTooSoon) within the empty-poll interval after the last such one that answered nothing.
   */
  async poll(request: { readonly maxEvents: number; readonly ack: readonly string[]; readonly setErrs: Readonly<Record<string, SetError>>; readonly waitMs: number }, signal: AbortSignal): Promise<{ sets: Record<string, string>; moreAvailable: boolean }> {
    const acknowledged = new Set(request.ack);
    const errs = new Map(Object.entries(request.setErrs));
    // Only a poll that returns at once and acknowledges nothing is limited: a long poll waits, and acknowledgments are work done.
    const quiet = request.waitMs === 0 && acknowledged.size === 0 && errs.size === 0;
    if (quiet) this.refuseEmptyTooSoon(request.maxEvents);
    const answer = await this.answer(request, acknowledged, errs, signal);
    if (quiet && Object.keys(answer.sets).length === 0) this.lastEmptyAnswerAt = this.deps.clock.now();
    return answer;
  }

  /**
   * RFC 8936 has returnImmediately answered at once, so a poll that would answer nothing is not
   * delayed but refused, with how long to wait, while the stream answered nothing within the
   * interval: receivers polling an empty stream back to back cost the process TLS, routing and the
   * receiver token's keyed hash hundreds of times a second. A poll with SETs to answer, or with
   * acknowledgments, is never refused, and a long poll waits instead.
   */
  private refuseEmptyTooSoon(maxEvents: number): void {
    const at = this.deps.clock.now();
    if (maxEvents > 0 && this.deliverable() && this.nextAnswerableAt(at) <= at) return;
    const wait = secondsToWait(this.lastEmptyAnswerAt, at, this.deps.emptyPollIntervalMs ?? 0);
    if (wait > 0) throw new SsfEmptyPollTooSoon(wait);
  }

  private async answer(
    request: { readonly maxEvents: number; readonly waitMs: number },
    acknowledged: ReadonlySet<string>,
    errs: ReadonlyMap<string, SetError>,
    signal: AbortSignal,
  ): Promise<{ sets: Record<string, string>; moreAvailable: boolean }> {
    if (acknowledged.size > 0 || errs.size > 0) {
      let kept = false;
      for (let index = this.queue.length - 1; index >= 0; index -= 1) {
        const pending = this.queue[index]!;
        const { jti } = pending.claims;
        const reported = acknowledged.has(jti) ? undefined : errs.get(jti);
        if (!acknowledged.has(jti) && reported === undefined) continue;
        if (reported !== undefined && !this.dropsFor(reported.err)) {
          // About the receiver's keys or configuration, not this SET: it stays, and is answered again after the deadline.
          kept = true;
          continue;
        }
        this.queue.splice(index, 1);
        if (reported === undefined) this.deliveredOne();
        else this.drop(jti, reported.err, 'poll');
      }
      if (kept) await this.failedPoll(errs);
      else this.succeeded(this.pushing);
      this.saveCheckpoint();
      this.kick();
    }
    if (request.maxEvents === 0) return { sets: {}, moreAvailable: this.deliverable() && this.nextAnswerableAt(this.deps.clock.now()) <= this.deps.clock.now() };
    const waitEnds = this.deps.clock.now() + request.waitMs;
    while (!this.stopped && !signal.aborted) {
      const at = this.deps.clock.now();
      const answerableAt = this.deliverable() ? this.nextAnswerableAt(at) : Number.POSITIVE_INFINITY;
      if (answerableAt <= at || waitEnds <= at) break;
      // A SET arriving wakes the wait; one held back becomes answerable at its deadline.
      await this.arrived.wait(Math.min(waitEnds, answerableAt) - at, signal);
    }
    if (!this.deliverable()) return { sets: {}, moreAvailable: false };
    const at = this.deps.clock.now();
    const sets: Record<string, string> = {};
    const budgetEnds = performance.now() + pollSigningBudgetMs;
    let answered = 0;
    let bytes = 0;
    for (const pending of this.queue) {
      if (!this.answerable(pending, at)) continue;
      if (answered >= request.maxEvents || (answered > 0 && (bytes >= pollAnswerBudgetBytes || (pending.signed === undefined && performance.now() > budgetEnds)))) return { sets, moreAvailable: true };
      const set = this.signedOf(pending);
      sets[pending.claims.jti] = set;
      pending.answeredAt = at;
      bytes += set.length + pending.claims.jti.length;
      answered += 1;
    }
    return { sets, moreAvailable: false };
  }

  private answerable(pending: PendingSet, at: number): boolean {
    return pending.answeredAt === undefined || at - pending.answeredAt >= (this.deps.ackDeadlineMs ?? 0);
  }

  /** When the first pending SET may be answered (`at` if one may now); infinity when none is pending. */
  private nextAnswerableAt(at: number): number {
    let earliest = Number.POSITIVE_INFINITY;
    const deadlineMs = this.deps.ackDeadlineMs ?? 0;
    for (const pending of this.queue) {
      if (pending.answeredAt === undefined) return at;
      earliest = Math.min(earliest, Math.max(at, pending.answeredAt + deadlineMs));
      if (earliest === at) return at;
    }
    return earliest;
  }

  /**
   * The SET as it goes out now: addressed to the stream's audience as it is now (an endpoint
   * changed after the SET was queued re-addresses it, or a compliant receiver would refuse it for
   * good), signed with the current key. Signed once; signed again only when either changed.
   */
  private signedOf(pending: PendingSet): string {
    const stream = this.now.stream(this.streamId);
    const aud = stream === undefined ? pending.claims.aud : audienceOf(stream);
    const key = this.deps.keyring.current();
    if (pending.signed !== undefined && pending.signed.kid === key.kid && pending.signed.aud === aud) return pending.signed.jwt;
    const jwt = signSet(aud === pending.claims.aud ? pending.claims : { ...pending.claims, aud }, this.deps.keyring);
    pending.signed = { kid: key.kid, aud, jwt };
    return jwt;
  }

  /** Epoch seconds of the last SET the receiver acknowledged since the process started, for the admin console. */
  get lastDeliveredAt(): number | undefined {
    return this.lastDelivered;
  }

  private deliveredOne(): void {
    this.lastDelivered = Math.floor(this.deps.clock.now() / 1000);
    this.deps.counters.delivered(this.streamId);
  }

  /** What this stream dropped since the process started. */
  get drops(): Drops {
    return this.lastDrop === undefined ? { count: this.dropCount } : { count: this.dropCount, last: this.lastDrop };
  }

  /**
   * Whether a receiver's error code drops the SET: `invalid_request` says the SET itself is
   * malformed, unless the signing key changed so lately that the receiver's key cache may not
   * know it yet (a stale JWKS cache answers exactly that); then it is a failure like any other.
   */
  private dropsFor(err: string): boolean {
    if (!droppedErrorCodes.has(err)) return false;
    const publishedAt = this.deps.keyring.currentPublishedAt();
    return publishedAt === undefined || this.deps.clock.now() - publishedAt * 1000 >= keyRotationGraceMs;
  }

  private drop(jti: string, err: string, method: 'push' | 'poll'): void {
    this.dropCount += 1;
    this.lastDrop = { jti, err, at: Math.floor(this.deps.clock.now() / 1000) };
    this.deps.counters.dropped(this.streamId);
    this.deps.logger.warn({ stream_id: this.streamId, jti, err, method }, 'a Shared Signals receiver refused a SET as malformed; it is dropped and not sent again');
  }

  /** A polled SET reported with an error that is not the SET's fault: counted as a failing delivery, which pauses the stream in time. */
  private async failedPoll(errs: ReadonlyMap<string, SetError>): Promise<void> {
    this.deps.counters.failed(this.streamId);
    this.retry.failed(new Error(`the receiver reported ${[...new Set([...errs.values()].map((reported) => reported.err))].join(', ')}`));
    const since = this.retry.failingSinceMs;
    if (since !== undefined && this.deps.clock.now() - since >= this.deps.pauseAfterMs) {
      await this.pauseOnce(`the receiver has been reporting errors for its SETs since ${new Date(since).toISOString()}: paused by the transmitter; enable the stream to resume where it stopped`);
    }
  }

  /** Enabled, its receiver not revoked, and not deleted: the only state in which SETs go out. */
  private deliverable(): boolean {
    const stream = this.now.stream(this.streamId);
    return stream !== undefined && stream.streamStatus === 'enabled' && this.now.receiverActive(this.receiverId);
  }

  private async run(): Promise<void> {
    try {
      while (!this.stopped) {
        try {
          if (!this.deliverable()) {
            if (this.now.stream(this.streamId) === undefined) return;
            this.goDormant();
            // Ends until reconsider() (the stream, its status or its receiver changed).
            return;
          }
          if (this.mode === 'dormant') await this.beginCatchUp();
          if (this.mode === 'behind' && this.queue.length < this.queueCap / 2) this.mode = 'catching-up';
          if (this.mode === 'catching-up') {
            if (this.queue.length >= this.queueCap) this.mode = 'behind';
            else await this.readPage();
            this.succeeded(this.readingLog);
          }
          if (this.queue.length > 0 && !this.isPoll) {
            await this.pushOldest();
            continue;
          }
          if (this.mode === 'catching-up' || this.stopped) continue;
          // Nothing to do: ends until a SET is queued (offer), acknowledged (poll) or the stream changes (reconsider).
          return;
        } catch (error) {
          // The store unavailable while reading the log: wait and read again; nothing was taken.
          await this.scheduler.sleep(this.reading.failed(error), this.abort.signal);
        }
      }
    } finally {
      // In the same turn as the loop's last look at the queue and the stream (a return here runs
      // this before any other code): a kick after it starts a new loop, none is lost.
      this.running = false;
    }
  }

  /** Drops what is in memory: the checkpoint says where to read again. */
  private goDormant(): void {
    if (this.mode === 'dormant') return;
    this.mode = 'dormant';
    this.queue.length = 0;
    this.side = [];
    this.cursor = undefined;
  }

  private async beginCatchUp(): Promise<void> {
    const skippedTo = this.now.skippedTo(this.streamId);
    // A checkpoint before the stream's creation (a deployment-wide one) means its creation.
    const checkpoint = this.deps.checkpoints.get(this.streamId);
    let from = checkpoint === undefined || checkpoint < this.createdAt ? this.createdAt : checkpoint;
    if (skippedTo !== undefined && skippedTo > from) from = skippedTo;
    const oldest = await this.deps.retention.oldestRetained();
    if (oldest !== undefined && from < oldest - 1n) {
      // The log no longer holds what this stream has not had: say so, and resume from what it holds.
      const resumeAfter = oldest - 1n;
      this.deps.checkpoints.set(this.streamId, resumeAfter);
      await this.pauseOnce(`fell behind the log's retention: the events after position ${from} up to ${resumeAfter} were removed before delivery (a gap); enable the stream to resume from position ${oldest}`, resumeAfter);
      return;
    }
    this.fold = await this.foldAsOf(from);
    this.cursor = from;
    this.mode = 'catching-up';
  }

  /**
   * The stream's own events folded as of `position` (subjects and status then): from the newest
   * snapshot (or its creation) at or before it, found by reading the stream backwards a page at a
   * time. A snapshot follows every `snapshotEvery` events, so what is read grows with the stream's
   * changes since `position`, not with its whole history.
   */
  private async foldAsOf(position: bigint): Promise<StreamState> {
    const stream = ssfStreams.stream(this.streamId);
    const read: RecordedEvent[] = [];
    let from: bigint | undefined;
    for (;;) {
      const page = await this.deps.store.readStream(stream, { direction: 'backwards', maxCount: snapshotReadBack, ...(from === undefined ? {} : { fromRevision: from }) });
      const start = page.findIndex((recorded) => recorded.position <= position && isEventOf(ssfStreamEventTypes, recorded.event) && startsStreamFold(recorded.event));
      read.push(...(start >= 0 ? page.slice(0, start + 1) : page));
      const oldest = page[page.length - 1];
      if (start >= 0 || page.length < snapshotReadBack || oldest === undefined || oldest.revision === 0n) break;
      from = oldest.revision - 1n;
    }
    let fold = initialStreamState();
    for (const recorded of read.reverse()) {
      if (recorded.position > position) break;
      if (isEventOf(ssfStreamEventTypes, recorded.event)) fold = evolveStream(fold, recorded.event);
    }
    return fold;
  }

  private async readPage(): Promise<void> {
    this.side = [];
    this.sideOverflow = false;
    const after = this.cursor;
    const page = await this.deps.store.readAll({ ...(after === undefined ? {} : { after }), types: catchUpTypes, maxCount: this.pageSize });
    if (this.mode !== 'catching-up') return;
    for (const recorded of page) this.take(recorded);
    if (page.length >= this.pageSize || this.sideOverflow) return;
    // The page reached the head as of its read; what came since was handed out meanwhile and kept aside.
    for (const recorded of this.side) if (this.cursor === undefined || recorded.position > this.cursor) this.take(recorded);
    this.side = [];
    const handedOut = this.now.handedOutTo();
    if (handedOut !== undefined && (this.cursor === undefined || this.cursor < handedOut)) this.cursor = handedOut;
    this.mode = this.queue.length >= this.queueCap ? 'behind' : 'live';
    if (this.queue.length === 0) this.saveCheckpoint();
  }

  /** Folds one event of the log into the stream as of its position, and queues its SET if it makes one. */
  private take(recorded: RecordedEvent): boolean {
    this.cursor = recorded.position;
    const { event } = recorded;
    if (isEventOf(ssfStreamEventTypes, event) && event.type !== 'SsfVerificationRequested') {
      if (event.streamId === this.streamId) this.fold = evolveStream(this.fold, event);
      return false;
    }
    const stream = this.fold;
    if (stream.status !== 'live' || stream.streamStatus === 'disabled') return false;
    const claims = setFor(recorded, { streamId: this.streamId, audience: audienceOf(stream), subjects: stream.subjects, eventsDelivered: stream.configuration.eventsDelivered }, this.deps.issuer());
    if (!claims) return false;
    this.queue.push({ position: recorded.position, claims, recordedAt: recorded.recordedAt });
    this.arrivals?.wake();
    return true;
  }

  private async pushOldest(): Promise<void> {
    const pending = this.queue[0]!;
    const stream = this.now.stream(this.streamId);
    if (!stream || stream.configuration.delivery.method !== 'push') return;
    const { endpointUrl, sealedAuthorization } = stream.configuration.delivery;
    let authorization: string | undefined;
    let set: string;
    try {
      // A header sealed under a secret-hashing key this host lacks (rotated, not copied here yet)
      // is a failure to retry, as a signing key not at hand is: the SET waits, nothing is lost.
      authorization = sealedAuthorization === undefined ? undefined : this.deps.seal.open(this.streamId, sealedAuthorization);
      set = this.signedOf(pending);
    } catch (error) {
      await this.failed(error);
      return;
    }
    if (this.deps.mayDeliver?.() === false) {
      // The lease is no longer this replica's: the holder's loop stops this worker in a moment.
      await this.scheduler.sleep(1_000, this.abort.signal);
      return;
    }
    const outcome = await (this.connection ??= this.deps.pushClient()).push(endpointUrl, set, authorization, this.abort.signal);
    if (this.queue[0] !== pending) return;
    if (outcome.kind === 'failed') {
      await this.failed(new Error(outcome.reason));
      return;
    }
    if (outcome.kind === 'refused' && !this.dropsFor(outcome.err)) {
      await this.failed(new Error(`HTTP ${outcome.status} ${outcome.err} within ${keyRotationGraceMs / 60_000} minutes of a signing-key rotation`));
      return;
    }
    this.queue.shift();
    this.succeeded(this.pushing);
    if (outcome.kind === 'delivered') this.deliveredOne();
    else this.drop(pending.claims.jti, outcome.err, 'push');
    this.saveCheckpoint();
  }

  private async failed(error: unknown): Promise<void> {
    this.deps.counters.failed(this.streamId);
    const wait = this.retry.failed(error);
    const since = this.retry.failingSinceMs;
    if (since !== undefined && this.deps.clock.now() - since >= this.deps.pauseAfterMs) {
      await this.pauseOnce(`delivery has been failing since ${new Date(since).toISOString()}: paused by the transmitter; enable the stream to resume where it stopped`);
      return;
    }
    await this.scheduler.sleep(wait, this.abort.signal);
  }

  private async pauseOnce(reason: string, skippedTo?: bigint): Promise<void> {
    if (this.pausing) return;
    this.pausing = true;
    try {
      await this.deps.pause(this.streamId, this.receiverId, reason, skippedTo);
      this.deps.counters.paused(this.streamId);
      this.deps.logger.warn({ stream_id: this.streamId, reason }, 'a Shared Signals stream was paused by the transmitter');
      this.succeeded(this.pushing);
      // Until the pause is read back from the log (then the stream is dormant), at most a few seconds.
      const until = this.deps.clock.now() + 5_000;
      while (this.deliverable() && !this.stopped && this.deps.clock.now() < until) await this.scheduler.sleep(20, this.abort.signal);
    } catch (error) {
      this.deps.logger.error({ err: error, stream_id: this.streamId }, 'could not pause a failing Shared Signals stream; retrying');
      await this.scheduler.sleep(1_000, this.abort.signal);
    } finally {
      this.pausing = false;
    }
  }

  /** Where this stream's delivery has got to, for the lease holder's checkpoint record. */
  get checkpoint(): bigint {
    const checkpoint = this.deps.checkpoints.get(this.streamId);
    return checkpoint === undefined || checkpoint < this.createdAt ? this.createdAt : checkpoint;
  }

  private saveCheckpoint(): void {
    const first = this.queue[0];
    const position = first ? first.position - 1n : this.cursor;
    if (position !== undefined) this.deps.checkpoints.set(this.streamId, position);
  }
}
