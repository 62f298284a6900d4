import { ExpectedRevisionConflict, type EventStore, type ExpectedRevision } from '@tessera/event-store';
import { isEventOf, ssfDeliveryEventTypes, ssfStreams, type RecordedEvent, type SsfDeliveryEvent } from '@tessera/events';
import type { Cancel, Clock, Scheduler } from '@tessera/timing';
import { contenderDecision, holderDecision, renewEveryMs, type NewestLeaseEvent } from './lease-decision.js';

export interface DeliveryLeaseOptions {
  readonly store: Pick<EventStore, 'append' | 'readStream'>;
  /** TESSERA_REPLICA_ID, or its default. */
  readonly replica: string;
  /** Where the other replicas reach this one (TESSERA_SSF_REPLICA_URL), read at each take and renewal. */
  readonly url: () => string;
  /** The certificate this replica serves, for the others to pin when they forward to it. */
  readonly certificateSha256: () => string | undefined;
  readonly ttlMs: number;
  /** This machine's monotonic time (ms): never compared with another machine's. */
  readonly monotonic: Clock;
  readonly scheduler: Scheduler;
  /** Epoch seconds, for the events' `at`. */
  readonly now: () => number;
  readonly logger: { info(fields: Record<string, unknown>, message: string): void; warn(fields: Record<string, unknown>, message: string): void };
  /** The lease was taken at `epoch`: start delivering. */
  readonly onTaken: (epoch: number) => void;
  /** The lease is lost (fenced, lapsed) or being released: stop delivering at once; resolves once stopped. */
  readonly onLost: (reason: 'fenced' | 'lapsed' | 'stopping') => Promise<void>;
}

/** Where the holder is reached, as its newest lease event names it. */
export interface HolderAddress {
  readonly url: string;
  readonly certificateSha256?: string | undefined;
}

interface Held {
  readonly epoch: number;
  wroteRevision: bigint;
  renewalStartedMs: number;
}

/** An event of `ssfdelivery` without what the holder's epoch and name add to every one. */
export type LeaseRecord = Omit<Extract<SsfDeliveryEvent, { type: 'SsfDeliveryCheckpointed' }>, 'replica' | 'epoch' | 'v'>;

/**
 * The delivery lease's I/O: reads the newest event of `ssfdelivery` now and then, takes the lease
 * when the decision says so, renews it every TTL/3, and fences this replica's delivery the moment
 * an append finds another replica's event (a revision conflict) or renewals have failed too long.
 */
export class DeliveryLease {
  private held: Held | undefined;
  private seen: { newest: NewestLeaseEvent | undefined; sinceMs: number } | undefined;
  /** The holder's address as last read (undefined: none holds it, or it released it). */
  private holderSeen: HolderAddress | undefined;
  private cancelTick: Cancel | undefined;
  private ticking = false;
  private stopped = false;
  /** The holder's appends, one at a time: each expects the revision the one before it wrote. */
  private appending: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DeliveryLeaseOptions) {}

  start(): void {
    // Often enough that a released or expired lease is taken within a fraction of the TTL.
    this.cancelTick = this.options.scheduler.every(Math.min(this.options.ttlMs / 6, 1_000), () => void this.tick());
    void this.tick();
  }

  /** Lets go: stops delivery (its last checkpoint appended), then records the release, so another replica takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTick?.();
    const held = this.held;
    if (!held) return;
    await this.options.onLost('stopping');
    try {
      await this.appendAsHolder({ type: 'SsfDeliveryLeaseReleased', at: this.options.now() });
      this.options.logger.info({ epoch: held.epoch }, 'released the Shared Signals delivery lease');
    } catch (error) {
      // Another replica takes it after the TTL instead.
      this.options.logger.warn({ err: error }, 'could not release the Shared Signals delivery lease');
    } finally {
      this.held = undefined;
    }
  }

  /** True while this replica holds the lease and may deliver: checked before each push and to serve polls here. */
  get valid(): boolean {
    const held = this.held;
    return held !== undefined && !this.stopped && holderDecision({ wroteRevision: held.wroteRevision, newestRevision: held.wroteRevision, renewalStartedMs: held.renewalStartedMs }, this.options.monotonic.now(), this.options) === 'hold';
  }

  /** Whether this replica holds the lease (valid or not yet known to have lapsed). */
  get holding(): boolean {
    return this.held !== undefined;
  }

  /** Where the holder is, as last read; undefined while this replica holds it, or none does. */
  get holder(): HolderAddress | undefined {
    return this.held ? undefined : this.holderSeen;
  }

  /** The holder's append of a checkpoint: expects the revision it wrote last; a conflict fences it. */
  async appendCheckpoint(record: LeaseRecord): Promise<void> {
    await this.appendAsHolder(record);
  }

  private appendAsHolder(record: LeaseRecord | { type: 'SsfDeliveryLeaseRenewed' | 'SsfDeliveryLeaseReleased'; at: number }): Promise<void> {
    const next = this.appending.then(async () => {
      const held = this.held;
      if (!held) throw new ExpectedRevisionConflict(ssfStreams.delivery(), 'any', 'no_stream');
      const event = { ...record, v: 1 as const, replica: this.options.replica, epoch: held.epoch, ...(record.type === 'SsfDeliveryLeaseRenewed' ? this.address() : {}) } as SsfDeliveryEvent; // the spread of a union member with its own fields: TypeScript cannot narrow it back
      try {
        const result = await this.options.store.append(ssfStreams.delivery(), [{ event }], { expectedRevision: held.wroteRevision });
        held.wroteRevision = result.nextExpectedRevision;
      } catch (error) {
        if (error instanceof ExpectedRevisionConflict) void this.lose('fenced');
        throw error;
      }
    });
    this.appending = next.catch(() => undefined);
    return next;
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      if (this.held) await this.tickHolding(this.held);
      else await this.tickContending();
    } catch (error) {
      // A conflict is another replica's taking: lose() has said so already.
      if (!(error instanceof ExpectedRevisionConflict)) this.options.logger.warn({ err: error }, 'the Shared Signals delivery lease could not reach the event log; trying again');
    } finally {
      this.ticking = false;
    }
  }

  private async tickHolding(held: Held): Promise<void> {
    const nowMs = this.options.monotonic.now();
    const decision = holderDecision({ wroteRevision: held.wroteRevision, newestRevision: held.wroteRevision, renewalStartedMs: held.renewalStartedMs }, nowMs, this.options);
    if (decision !== 'hold') {
      await this.lose(decision);
      return;
    }
    if (nowMs - held.renewalStartedMs < renewEveryMs(this.options)) return;
    await this.appendAsHolder({ type: 'SsfDeliveryLeaseRenewed', at: this.options.now() });
    // Valid from when the renewal started, not when it landed: the contender's TTL runs from later.
    if (this.held === held) held.renewalStartedMs = nowMs;
  }

  private async tickContending(): Promise<void> {
    const newest = await this.readNewest();
    const nowMs = this.options.monotonic.now();
    if (this.seen === undefined || this.seen.newest?.revision !== newest?.revision) this.seen = { newest, sinceMs: nowMs };
    if (contenderDecision(this.options.replica, { newest: this.seen.newest, seenSinceMs: this.seen.sinceMs }, nowMs, this.options) === 'wait') return;
    await this.take(newest);
  }

  /** This replica's address for its lease events. */
  private address(): { url: string; certificateSha256?: string } {
    const url = this.options.url();
    const certificateSha256 = this.options.certificateSha256();
    return certificateSha256 === undefined ? { url } : { url, certificateSha256 };
  }

  private async take(newest: NewestLeaseEvent | undefined): Promise<void> {
    const epoch = (newest?.epoch ?? 0) + 1;
    const { url, ...pinned } = this.address();
    const expectedRevision: ExpectedRevision = newest?.revision ?? 'no_stream';
    const startedMs = this.options.monotonic.now();
    try {
      const result = await this.options.store.append(
        ssfStreams.delivery(),
        [{ event: { type: 'SsfDeliveryLeaseTaken', v: 1, replica: this.options.replica, epoch, url, ...pinned, ttlSeconds: Math.round(this.options.ttlMs / 1000), at: this.options.now() } }],
        { expectedRevision },
      );
      this.held = { epoch, wroteRevision: result.nextExpectedRevision, renewalStartedMs: startedMs };
      if (this.stopped) {
        // Stopped while taking it: let go at once rather than leave the others waiting a TTL.
        await this.appendAsHolder({ type: 'SsfDeliveryLeaseReleased', at: this.options.now() });
        this.held = undefined;
        return;
      }
    } catch (error) {
      // Another replica took it first: read again next time.
      if (error instanceof ExpectedRevisionConflict) return;
      throw error;
    }
    this.options.logger.info({ epoch, replica: this.options.replica, url }, 'took the Shared Signals delivery lease: this replica delivers every stream');
    this.options.onTaken(epoch);
  }

  private async lose(reason: 'fenced' | 'lapsed'): Promise<void> {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    // Read afresh next tick: a fenced holder waits a TTL of the new holder's silence from now.
    this.seen = undefined;
    this.options.logger.warn({ epoch: held.epoch, reason }, reason === 'fenced' ? 'another replica took the Shared Signals delivery lease: this one stops delivering' : 'could not renew the Shared Signals delivery lease in time: this replica stops delivering');
    await this.options.onLost(reason);
  }

  /** The newest event of the stream; and the holder's url, looking past checkpoints for the event that names it. */
  private async readNewest(): Promise<NewestLeaseEvent | undefined> {
    const [newest] = await this.options.store.readStream(ssfStreams.delivery(), { direction: 'backwards', maxCount: 1 });
    const lease = leaseEventOf(newest);
    if (!lease) {
      this.holderSeen = undefined;
      return undefined;
    }
    if (newest!.event.type === 'SsfDeliveryCheckpointed' && (this.seen?.newest?.epoch !== lease.epoch || this.holderSeen === undefined)) {
      const recent = await this.options.store.readStream(ssfStreams.delivery(), { direction: 'backwards', maxCount: 100 });
      this.holderSeen = undefined;
      for (const recorded of recent) {
        if (!isEventOf(ssfDeliveryEventTypes, recorded.event) || recorded.event.epoch !== lease.epoch) break;
        if (recorded.event.type === 'SsfDeliveryLeaseTaken' || recorded.event.type === 'SsfDeliveryLeaseRenewed') {
          this.holderSeen = addressOf(recorded.event);
          break;
        }
      }
    } else if (newest!.event.type === 'SsfDeliveryLeaseTaken' || newest!.event.type === 'SsfDeliveryLeaseRenewed') {
      this.holderSeen = addressOf(newest!.event);
    } else if (newest!.event.type === 'SsfDeliveryLeaseReleased') {
      this.holderSeen = undefined;
    }
    return lease;
  }
}

function addressOf(event: { url: string; certificateSha256?: string | undefined }): HolderAddress {
  return { url: event.url, certificateSha256: event.certificateSha256 };
}

const kinds = { SsfDeliveryLeaseTaken: 'taken', SsfDeliveryLeaseRenewed: 'renewed', SsfDeliveryLeaseReleased: 'released', SsfDeliveryCheckpointed: 'checkpointed' } as const;

function leaseEventOf(recorded: RecordedEvent | undefined): NewestLeaseEvent | undefined {
  if (!recorded || !isEventOf(ssfDeliveryEventTypes, recorded.event)) return undefined;
  const { event } = recorded;
  return { kind: kinds[event.type], replica: event.replica, epoch: event.epoch, revision: recorded.revision };
}
