/**
 * The delivery lease's decisions, pure: one replica of the deployment delivers every stream's SETs
 * (docs/decisions/0029). Times are this replica's own monotonic milliseconds; no two machines'
 * clocks are ever compared, only how long this replica has seen the log's `ssfdelivery` unchanged.
 */

/** The newest event of `ssfdelivery`, as any replica reads it. */
export interface NewestLeaseEvent {
  readonly kind: 'taken' | 'renewed' | 'released' | 'checkpointed';
  readonly replica: string;
  readonly epoch: number;
  readonly revision: bigint;
}

export interface LeaseTiming {
  readonly ttlMs: number;
}

/** A contender's view: the newest event it read, and when (its own time) it first saw that revision. */
export interface ContenderView {
  readonly newest: NewestLeaseEvent | undefined;
  readonly seenSinceMs: number;
}

/** take: append a Taken now (expecting the revision seen); wait: someone else holds it. */
export type ContenderDecision = 'take' | 'wait';

export function contenderDecision(self: string, view: ContenderView, nowMs: number, timing: LeaseTiming): ContenderDecision {
  const { newest } = view;
  // Nobody ever held it, or the holder let go: no one delivers, so take it at once.
  if (newest === undefined || newest.kind === 'released') return 'take';
  // This replica restarted: the holder named is this one's earlier life, which delivers no more.
  if (newest.replica === self) return 'take';
  // The holder has been silent for a whole TTL of this replica's time: it stopped delivering TTL/6 before.
  return nowMs - view.seenSinceMs >= timing.ttlMs ? 'take' : 'wait';
}

/** A holder's view: the revision it last wrote, the newest revision it has read, and when its last successful renewal started. */
export interface HolderView {
  readonly wroteRevision: bigint;
  readonly newestRevision: bigint;
  readonly renewalStartedMs: number;
}

/** hold: deliver; fenced: another replica wrote (took it); lapsed: renewals failed too long, so stop before a contender may take it. */
export type HolderDecision = 'hold' | 'fenced' | 'lapsed';

export function holderDecision(view: HolderView, nowMs: number, timing: LeaseTiming): HolderDecision {
  if (view.newestRevision !== view.wroteRevision) return 'fenced';
  return nowMs < validUntilMs(view.renewalStartedMs, timing) ? 'hold' : 'lapsed';
}

/**
 * The holder delivers only until TTL - TTL/6 after its last successful renewal started. A contender
 * saw that renewal at or after it landed, so it waits at least a TTL from then: the TTL/6 between
 * is the margin for clocks that tick at slightly different rates and for the stop itself.
 */
export function validUntilMs(renewalStartedMs: number, timing: LeaseTiming): number {
  return renewalStartedMs + timing.ttlMs - timing.ttlMs / 6;
}

/** Renewals every TTL/3: two may fail before the holder stops. */
export function renewEveryMs(timing: LeaseTiming): number {
  return timing.ttlMs / 3;
}
