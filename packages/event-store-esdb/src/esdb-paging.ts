import { BACKWARDS, type AllStreamResolvedEvent, type Direction, type Position, type ReadPosition } from '@eventstore/db-client';
import { InvariantBroken } from '@tessera/contracts';

/**
 * Walking $all in bounded reads. The client (6.x) has no server-side filter for readAll, so
 * system events and unwanted types are skipped here; what keeps that cheap is that every read
 * asks for at most `maxCount` records and the walk stops as soon as the caller has its answer.
 * Pure apart from the page reader it is given, so it is unit-tested without a server.
 */

/** One bounded read of $all: at most `maxCount` records from `fromPosition`, in `direction`. */
export type ReadAllPage = (request: { direction: Direction; fromPosition: ReadPosition; maxCount: number }) => Promise<AllStreamResolvedEvent[]>;

export interface WalkOptions {
  readonly direction: Direction;
  readonly from: ReadPosition;
  /** Records in the first read; each further read doubles it, up to maxPage. */
  readonly firstPage: number;
  readonly maxPage: number;
  /** Records to look at before giving up; unbounded when absent. */
  readonly scanLimit?: number;
}

/** Why a walk ended: the visitor had its answer, the log ran out, or the scan limit was reached. */
export type WalkEnd = 'stopped' | 'end' | 'limit';

/**
 * Visits records one at a time until `visit` returns false. Whether the server includes the
 * record at the position a read starts from or not, each record is visited exactly once: the
 * walk skips anything not strictly beyond the last record it visited.
 */
export async function walkAll(readPage: ReadAllPage, options: WalkOptions, visit: (resolved: AllStreamResolvedEvent) => boolean): Promise<WalkEnd> {
  const backwards = options.direction === BACKWARDS;
  const scanLimit = options.scanLimit ?? Infinity;
  let from = options.from;
  let last: bigint | undefined;
  let maxCount = Math.max(2, options.firstPage);
  let scanned = 0;
  for (;;) {
    const page = await readPage({ direction: options.direction, fromPosition: from, maxCount });
    let fresh = 0;
    for (const resolved of page) {
      const position = recordPosition(resolved);
      if (last !== undefined && (backwards ? position.commit >= last : position.commit <= last)) continue;
      last = position.commit;
      from = position;
      fresh += 1;
      scanned += 1;
      if (!visit(resolved)) return 'stopped';
      if (scanned >= scanLimit) return 'limit';
    }
    // A short page is the end of the log; a full page of records already seen cannot happen with
    // maxCount ≥ 2, but would loop for ever, so it ends the walk too.
    if (page.length < maxCount || fresh === 0) return 'end';
    maxCount = Math.min(maxCount * 2, Math.max(2, options.maxPage));
  }
}

/** A record's full position in $all: the next read starts there, so both halves are kept. */
export function recordPosition(resolved: AllStreamResolvedEvent): Position {
  const position = resolved.event?.position ?? (resolved.commitPosition === undefined ? undefined : { commit: resolved.commitPosition, prepare: resolved.commitPosition });
  if (!position) throw new InvariantBroken('a record of $all came without a position');
  return position;
}

/**
 * What this process knows of the head of $all, so that asking the server only needs to look
 * at what was written since it last looked: `position` is the newest event of ours it has seen
 * (from appends, subscriptions, reads); `checkedTo` the newest record of any kind a walk from
 * the end has looked at, with nothing of ours between the two. Both only grow.
 */
export class KnownHead {
  private position: bigint | undefined;
  private checkedTo: bigint | undefined;

  learn(position: bigint | undefined): void {
    if (position !== undefined && (this.position === undefined || position > this.position)) this.position = position;
  }

  /** A walk from the end looked at every record from `top` down to the head it answered (or to the start). */
  checked(top: bigint | undefined): void {
    if (top !== undefined && (this.checkedTo === undefined || top > this.checkedTo)) this.checkedTo = top;
  }

  get(): bigint | undefined {
    return this.position;
  }

  /** Records at or below this hold nothing of ours newer than get(): a walk from the end stops there. */
  floor(): bigint | undefined {
    if (this.position === undefined || this.checkedTo === undefined) return this.position ?? this.checkedTo;
    return this.checkedTo > this.position ? this.checkedTo : this.position;
  }
}
