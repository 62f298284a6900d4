import { InvariantBroken } from '@tessera/contracts';
/** What the phase learns from the process's follower of the log once it exists. */
export interface FollowerProgress {
  /** Resolves once the read models have caught up with the log the first time. */
  readonly whenCaughtUp: Promise<void>;
  /** Open and caught up since the last (re)connection. */
  readonly live: () => boolean;
  readonly lastPosition: () => bigint | undefined;
}

/**
 * The phase of a process in which its read models catch up with the log. Parts are wired in any
 * order, most before the follower that feeds them exists (its readers come from them), so each
 * waits on this phase rather than being handed the follower later by whoever wires the process:
 * Shared Signals delivers, the control region's fence counts the local log as read, the issuer may
 * write, and archiving holds back, all from the same promise.
 */
export interface ReadModelsPhase {
  /** Resolves once the process's read models have caught up with the log; rejects if they fail to start. */
  readonly caughtUp: Promise<void>;
  /** Runs `step` once they have caught up. Never runs if they fail: that failure is reported where the start fails. */
  onCaughtUp(step: () => void): void;
  /** Caught up and following now (false before the follower exists). */
  live(): boolean;
  /** The last position the read models applied (undefined before the follower exists or applies anything). */
  lastPosition(): bigint | undefined;
}

/** The phase, with the call that feeds it: followInto makes it for the follower of the process's read models. */
export interface ReadModelsLifecycle extends ReadModelsPhase {
  /** Names the follower of the process's read models: once per process. */
  follow(follower: FollowerProgress): void;
}

export function createReadModelsLifecycle(): ReadModelsLifecycle {
  let follower: FollowerProgress | undefined;
  const named: { settle?: (follower: FollowerProgress) => void } = {};
  const caughtUp = new Promise<void>((resolve, reject) => {
    named.settle = (followed) => {
      followed.whenCaughtUp.then(resolve, reject);
    };
  });
  // A start that fails is reported where it fails (the host's whenReady); nothing waits here for it then.
  caughtUp.catch(() => undefined);
  return {
    caughtUp,
    onCaughtUp: (step) => void caughtUp.then(step, () => undefined),
    live: () => follower?.live() ?? false,
    lastPosition: () => follower?.lastPosition(),
    follow: (followed) => {
      if (follower) throw new InvariantBroken('a process has one follower of its read models; a second was wired');
      follower = followed;
      // Set: a promise's executor runs before its constructor returns.
      named.settle?.(followed);
    },
  };
}
