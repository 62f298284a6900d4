import { existsSync } from 'node:fs';
import type { EventStore } from '@tessera/event-store';
import { ssfStreams, type SsfDeliveryCheckpointed } from '@tessera/events';
import type { Cancel, Clock, Scheduler } from '@tessera/timing';
import { readCheckpointFile, type DeliveryCheckpoints } from './delivery-checkpoints.js';
import type { LeaseRecord } from './delivery-lease.js';

/**
 * Where delivery has got to, as a whole: every live stream with nothing pending is at `upTo`; the
 * streams named in `positions` are elsewhere (pending SETs, paused, dormant). A stream in neither
 * is at max(upTo, its creation position).
 */
export interface DeliverySnapshot {
  readonly upTo: bigint | undefined;
  readonly positions: ReadonlyMap<string, bigint>;
}

export interface LogCheckpointsOptions {
  /** The holder's append, expecting the revision it wrote last (a conflict fences it). */
  readonly append: (record: LeaseRecord) => Promise<void>;
  /** The transmitter's snapshot, taken when a record is written. */
  readonly snapshot: () => DeliverySnapshot;
  readonly scheduler: Scheduler;
  readonly monotonic: Clock;
  readonly now: () => number;
  /** Idle, a record is still written this often, so the newest stays among the stream's recent events and in the hot window. */
  readonly refreshEveryMs: number;
  readonly onError: (error: unknown) => void;
}

/** At most one record a second: a delivery is recorded within a second of it (a crash before repeats it, same jti). */
const minIntervalMs = 1_000;

/**
 * The DeliveryCheckpoints of the lease holder, kept in the log (`SsfDeliveryCheckpointed` in
 * `ssfdelivery`), so a replica that takes the lease over resumes where the last holder got to.
 * Workers set their positions here as before; a record of the whole is appended within a second
 * of a delivery, when a stream's position away from `upTo` changed, now and then while idle, and
 * at the end (flush).
 */
export class LogCheckpoints implements DeliveryCheckpoints {
  private readonly positions: Map<string, bigint>;
  private readonly upTo: bigint | undefined;
  private delivered = false;
  private lastWritten: DeliverySnapshot | undefined;
  private lastWrittenMs = Number.NEGATIVE_INFINITY;
  private cancelSoon: Cancel | undefined;
  private cancelEvery: Cancel | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    start: DeliverySnapshot,
    private readonly options: LogCheckpointsOptions,
  ) {
    this.upTo = start.upTo;
    this.positions = new Map(start.positions);
  }

  get(streamId: string): bigint | undefined {
    return this.positions.get(streamId) ?? this.upTo;
  }

  set(streamId: string, position: bigint): void {
    this.positions.set(streamId, position);
  }

  forget(streamId: string): void {
    this.positions.delete(streamId);
  }

  /** A SET was delivered or dropped: recorded within a second. */
  deliveredOne(): void {
    this.delivered = true;
    if (this.cancelSoon) return;
    const wait = Math.max(0, this.lastWrittenMs + minIntervalMs - this.options.monotonic.now());
    this.cancelSoon = this.options.scheduler.after(wait, () => {
      this.cancelSoon = undefined;
      void this.write(false);
    });
  }

  /** Looks once a second for a change that was not a delivery (a stream paused, behind, deleted), and now and then records anyway. */
  start(): void {
    this.cancelEvery = this.options.scheduler.every(minIntervalMs, () => void this.write(false));
  }

  /** Records the whole now, whatever changed: at the end of a holding (release), and once at its start. */
  async flush(): Promise<void> {
    this.cancelSoon?.();
    this.cancelSoon = undefined;
    this.cancelEvery?.();
    await this.write(true);
  }

  private write(always: boolean): Promise<void> {
    const next = this.writing.then(async () => {
      const snapshot = this.options.snapshot();
      const due = this.options.monotonic.now() - this.lastWrittenMs >= this.options.refreshEveryMs;
      if (!always && !this.delivered && !due && this.lastWritten !== undefined && samePositions(snapshot.positions, this.lastWritten.positions)) return;
      this.delivered = false;
      const startedMs = this.options.monotonic.now();
      try {
        await this.options.append(checkpointRecord(snapshot, this.options.now()));
        this.lastWritten = snapshot;
        this.lastWrittenMs = startedMs;
      } catch (error) {
        this.delivered = true;
        this.options.onError(error);
      }
    });
    this.writing = next;
    return next;
  }
}

function samePositions(a: ReadonlyMap<string, bigint>, b: ReadonlyMap<string, bigint>): boolean {
  if (a.size !== b.size) return false;
  for (const [streamId, position] of a) if (b.get(streamId) !== position) return false;
  return true;
}

function checkpointRecord(snapshot: DeliverySnapshot, at: number): LeaseRecord {
  return {
    type: 'SsfDeliveryCheckpointed',
    ...(snapshot.upTo === undefined ? {} : { upTo: snapshot.upTo.toString() }),
    positions: Object.fromEntries([...snapshot.positions].map(([streamId, position]) => [streamId, position.toString()])),
    at,
  };
}

/** How far back a new holder looks for the last checkpoint: the holder records one at least every refresh, between a few dozen renewals. */
const recentEvents = 1_000;

/**
 * Where the last holder got to: the newest `SsfDeliveryCheckpointed` of `ssfdelivery`. With none
 * there (the first start after an upgrade), the checkpoint file of the versions that kept one
 * (`ssf-checkpoints.json` in the data folder), if it exists; else nothing (each stream from its creation).
 */
export async function loadDeliverySnapshot(store: Pick<EventStore, 'readStream'>, legacyFile: string): Promise<DeliverySnapshot> {
  const recent = await store.readStream(ssfStreams.delivery(), { direction: 'backwards', maxCount: recentEvents });
  for (const { event } of recent) if (event.type === 'SsfDeliveryCheckpointed') return snapshotOf(event);
  if (!existsSync(legacyFile)) return { upTo: undefined, positions: new Map() };
  return { upTo: undefined, positions: readCheckpointFile(legacyFile) };
}

function snapshotOf(event: SsfDeliveryCheckpointed): DeliverySnapshot {
  return { upTo: event.upTo === undefined ? undefined : BigInt(event.upTo), positions: new Map(Object.entries(event.positions).map(([streamId, position]) => [streamId, BigInt(position)])) };
}
