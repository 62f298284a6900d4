import { isEventOf, isRecordedOf, ssfReceiverEventTypes, ssfStreamEventTypes, ssfStreams, type RecordedEvent, type SsfStreamEvent, type TesseraEventType } from '@tessera/events';
import { handleCommand, readAllOf, type EventStore, type Subscription } from '@tessera/event-store';
import { Retry, systemScheduler, type Cancel, type Clock, type RetryLogger, type Scheduler } from '@tessera/timing';
import type { HeaderSeal } from '../sealed-header.js';
import { signalEventTypes } from '../set-mapping.js';
import type { SetKeyring } from '../set-signer.js';
import { evolveStream, initialStreamState, snapshotReadBack, startsStreamFold, streamDecider, type StreamCommand, type StreamState } from '../stream-decider.js';
import type { DeliveryCheckpoints } from './delivery-checkpoints.js';
import { PushClient, type PushEgress } from './push-client.js';
import type { RetentionHorizon } from './retention.js';
import { StreamWorker, type StreamNow, type StreamWorkerDeps } from './stream-worker.js';

export interface TransmitterOptions {
  readonly store: Pick<EventStore, 'readAll' | 'readStream' | 'append' | 'subscribeToAll' | 'headPosition'>;
  readonly keyring: SetKeyring;
  readonly seal: HeaderSeal;
  /** The SETs' iss, read as each is made: its default follows the port the public listener bound. */
  readonly issuer: () => string;
  readonly checkpoints: DeliveryCheckpoints;
  readonly retention: RetentionHorizon;
  readonly clock: Clock;
  /** Where the retries, the pause, the resubscription and the idle checkpoints wait; default the machine's timers. */
  readonly scheduler?: Scheduler;
  readonly logger: RetryLogger & { error(fields: Record<string, unknown>, message: string): void };
  readonly pushTimeoutMs: number;
  /** What pushes may reach. */
  readonly egress: PushEgress;
  readonly pauseAfterMs: number;
  /** How long a polled SET that was answered and not acknowledged is held back from the next polls (ms); 0 answers it again at once. */
  readonly ackDeadlineMs?: number;
  /** Least time between two polls of a stream that return at once, acknowledge nothing and answer nothing (ms); 0 no limit. */
  readonly emptyPollIntervalMs?: number;
  /** Epoch seconds, for the events the transmitter appends. */
  readonly now: () => number;
  readonly counters?: { delivered(streamId: string): void; failed(streamId: string): void; paused(streamId: string): void; dropped(streamId: string): void; forget(streamId: string): void };
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  readonly queueCap?: number;
  /** False while this replica may not deliver (the delivery lease): checked right before each push. */
  readonly mayDeliver?: () => boolean;
}

/** Everything the transmitter reads of the log: the signals, the streams and the receivers. */
const followedTypes: readonly TesseraEventType[] = [...new Set<TesseraEventType>([...signalEventTypes, ...ssfStreamEventTypes, ...ssfReceiverEventTypes])];

/** What the transmitter knows of one stream at the head of the log. */
interface StreamAtHead {
  state: StreamState;
  /** The position of the last of its events folded here: a second delivery of one is ignored. */
  foldedTo: bigint;
  createdAt: bigint;
  skippedTo: bigint | undefined;
}

/**
 * The Shared Signals transmitter's delivery: one subscription to the log hands each new event to
 * every stream's worker (StreamWorker), which queues the SETs it makes and delivers them, on its
 * own, in log order. It folds every stream and receiver at the head of the log, to tell a worker
 * when its stream is enabled, paused, disabled, deleted, or its receiver revoked.
 */
export class Transmitter {
  private readonly heads = new Map<string, StreamAtHead>();
  private readonly revokedReceivers = new Set<string>();
  private readonly workers = new Map<string, StreamWorker>();
  private subscription: Subscription | undefined;
  private handedOutTo: bigint | undefined;
  private stopped = false;
  private cancelResubscribe: Cancel | undefined;
  private cancelIdle: Cancel | undefined;
  private readonly resubscribing: Retry;
  private readonly scheduler: Scheduler;
  /** What every worker asks of the head of the log, by stream: one object, not closures per stream. */
  private readonly streamNow: StreamNow = {
    stream: (streamId) => {
      const state = this.heads.get(streamId)?.state;
      return state?.status === 'live' ? state : undefined;
    },
    receiverActive: (receiverId) => !this.revokedReceivers.has(receiverId),
    handedOutTo: () => this.handedOutTo,
    skippedTo: (streamId) => this.heads.get(streamId)?.skippedTo,
  };
  private readonly workerDeps: StreamWorkerDeps;

  constructor(private readonly options: TransmitterOptions) {
    this.scheduler = options.scheduler ?? systemScheduler;
    this.workerDeps = {
      store: options.store,
      keyring: options.keyring,
      seal: options.seal,
      issuer: options.issuer,
      checkpoints: options.checkpoints,
      retention: options.retention,
      pushClient: () => new PushClient(options.pushTimeoutMs, options.egress),
      clock: options.clock,
      scheduler: this.scheduler,
      logger: options.logger,
      pauseAfterMs: options.pauseAfterMs,
      ...(options.ackDeadlineMs ? { ackDeadlineMs: options.ackDeadlineMs } : {}),
      ...(options.emptyPollIntervalMs ? { emptyPollIntervalMs: options.emptyPollIntervalMs } : {}),
      pause: (streamId, receiverId, reason, skippedTo) => this.pause(streamId, receiverId, reason, skippedTo),
      ...(options.mayDeliver ? { mayDeliver: options.mayDeliver } : {}),
      counters: {
        delivered: (streamId) => options.counters?.delivered(streamId),
        failed: (streamId) => options.counters?.failed(streamId),
        paused: (streamId) => options.counters?.paused(streamId),
        dropped: (streamId) => options.counters?.dropped(streamId),
      },
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.queueCap ? { queueCap: options.queueCap } : {}),
    };
    this.resubscribing = new Retry({
      backoff: { initialMs: 1_000, maxMs: 5_000 },
      clock: options.clock,
      log: { logger: options.logger, failing: 'the Shared Signals transmitter lost its log subscription; resubscribing' },
    });
  }

  /** Folds the streams as they are now, starts a worker for each, and follows the log from its head. */
  async start(): Promise<void> {
    const { store } = this.options;
    const head = await store.headPosition();
    for await (const page of readAllOf(store, ssfReceiverEventTypes)) for (const recorded of page) this.foldReceiver(recorded.event);
    for await (const page of readAllOf(store, ssfStreamEventTypes)) for (const recorded of page) this.foldStream(recorded);
    this.handedOutTo = head;
    for (const [streamId, at] of this.heads) {
      if (at.state.status !== 'live') continue;
      this.worker(streamId, at.state.receiverId, at.createdAt).startBehind();
    }
    this.subscribe(head);
    // Now and then, the checkpoint of a stream with nothing pending follows what it has read.
    this.cancelIdle = this.scheduler.every(5_000, () => {
      for (const worker of this.workers.values()) worker.checkpointIdle();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelResubscribe?.();
    this.cancelIdle?.();
    await this.subscription?.close();
    await Promise.all([...this.workers.values()].map((worker) => worker.stop()));
    for (const worker of this.workers.values()) worker.closeConnection();
    await this.options.checkpoints.flush();
  }

  /**
   * Where delivery has got to, whole and small, for the lease holder's record: every stream with
   * nothing pending follows what was handed out; only the streams elsewhere are named.
   */
  deliverySnapshot(): { upTo: bigint | undefined; positions: Map<string, bigint> } {
    for (const worker of this.workers.values()) worker.checkpointIdle();
    const upTo = this.handedOutTo;
    const positions = new Map<string, bigint>();
    for (const worker of this.workers.values()) {
      const { checkpoint } = worker;
      const implied = upTo === undefined || upTo < worker.createdAt ? worker.createdAt : upTo;
      if (checkpoint !== implied) positions.set(worker.streamId, checkpoint);
    }
    return { upTo, positions };
  }

  /** The worker of a receiver's stream, for polling; undefined for another receiver's. */
  workerOf(receiverId: string, streamId: string): StreamWorker | undefined {
    const worker = this.workers.get(streamId);
    return worker?.receiverId === receiverId ? worker : undefined;
  }

  get streams(): readonly StreamWorker[] {
    return [...this.workers.values()];
  }

  private subscribe(after: bigint | undefined): void {
    const opened = this.options.store.subscribeToAll({
      ...(after === undefined ? {} : { after }),
      types: followedTypes,
      onEvent: (recorded) => this.onEvent(recorded),
      onError: (error) => {
        if (this.stopped) return;
        this.subscription = undefined;
        this.cancelResubscribe = this.scheduler.after(this.resubscribing.failed(error), () => {
          this.cancelResubscribe = undefined;
          if (!this.stopped) this.subscribe(this.handedOutTo);
        });
      },
    });
    this.subscription = opened;
    opened.caughtUp.then(() => this.resubscribing.succeeded(), () => undefined);
  }

  private onEvent(recorded: RecordedEvent): void {
    const { event } = recorded;
    if (isEventOf(ssfReceiverEventTypes, event)) {
      this.foldReceiver(event);
      for (const worker of this.workers.values()) if (worker.receiverId === event.receiverId) worker.reconsider();
    } else if (isRecordedOf(ssfStreamEventTypes, recorded) && recorded.event.type !== 'SsfVerificationRequested') {
      this.onStreamEvent(recorded);
    }
    this.handedOutTo = recorded.position;
    for (const worker of this.workers.values()) worker.offer(recorded);
  }

  private onStreamEvent(recorded: RecordedEvent<SsfStreamEvent>): void {
    const { event } = recorded;
    if (!this.foldStream(recorded)) return;
    const existing = this.workers.get(event.streamId);
    if (event.type === 'SsfStreamCreated' && !existing) {
      // A fold of its own (folds change their subjects in place): the worker's is as of each event, this one at the head.
      this.worker(event.streamId, event.receiverId, recorded.position).startLive(evolveStream(initialStreamState(), event), recorded.position);
      return;
    }
    if (event.type === 'SsfStreamDeleted' && existing) {
      this.workers.delete(event.streamId);
      this.heads.delete(event.streamId);
      void existing.stop().then(() => {
        existing.closeConnection();
        this.options.checkpoints.forget(event.streamId);
        this.options.counters?.forget(event.streamId);
      });
      return;
    }
    if (event.type === 'SsfStreamStatusChanged' || event.type === 'SsfStreamUpdated') existing?.reconsider();
  }

  private foldReceiver(event: { type: string; receiverId: string }): void {
    if (event.type !== 'SsfReceiverRevoked') return;
    this.revokedReceivers.add(event.receiverId);
    // Its streams stop delivering now, and drop what they hold: idle ones wait on no timer to notice.
    for (const worker of this.workers.values()) if (worker.receiverId === event.receiverId) worker.reconsider();
  }

  /** False when the event was folded already (read at start, then delivered by the subscription). */
  private foldStream(recorded: RecordedEvent<SsfStreamEvent>): boolean {
    const { event } = recorded;
    const at = this.heads.get(event.streamId);
    if (at && recorded.position <= at.foldedTo) return false;
    const state = evolveStream(at?.state ?? initialStreamState(), event);
    const skippedTo = event.type === 'SsfStreamStatusChanged' && event.skippedTo !== undefined ? BigInt(event.skippedTo) : at?.skippedTo;
    this.heads.set(event.streamId, { state, foldedTo: recorded.position, createdAt: at?.createdAt ?? recorded.position, skippedTo });
    return true;
  }

  private worker(streamId: string, receiverId: string, createdAt: bigint): StreamWorker {
    const worker = new StreamWorker(streamId, receiverId, this.streamNow, this.workerDeps, createdAt);
    this.workers.set(streamId, worker);
    return worker;
  }

  private async pause(streamId: string, receiverId: string, reason: string, skippedTo: bigint | undefined): Promise<void> {
    await handleCommand(this.options.store, {
      stream: ssfStreams.stream(streamId),
      decider: streamDecider,
      command: (): StreamCommand => ({ type: 'SetStreamStatus', receiverId, streamStatus: 'paused', reason, by: 'transmitter', skippedTo, now: this.options.now() }),
      read: { fromSnapshot: { within: snapshotReadBack, startsFold: startsStreamFold } },
      metadata: { actor: 'ssf-transmitter' },
      onConflict: { retries: 3 },
    });
  }
}
