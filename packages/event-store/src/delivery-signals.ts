/**
 * The two signals every log reader here is built from: "caught up", settled once from outside,
 * and a wake-up a writer gives a reader that is waiting for more (the SQLite and in-memory
 * subscriptions, the relay's pump and reader).
 */

/** A promise settled once from outside: a subscription's `caughtUp`. */
export interface Settled {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

export function settledFromOutside(): Settled {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((done, fail) => {
    resolve = done;
    reject = fail;
  });
  // Rejected when the reader fails before it is settled; nobody awaiting it is no crash.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** A reader's wait for more: ended by `wake()` (new events, room in a buffer, a close) or after its timeout. */
export class Wakeup {
  #wake: (() => void) | undefined;

  /** Waits until woken, or until `timeoutMs` has passed (none: only a wake ends it). */
  wait(timeoutMs?: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.#wake === done) this.#wake = undefined;
        resolve();
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(done, timeoutMs);
      this.#wake = done;
    });
  }

  /** Ends the wait in progress, if any; a wake with no one waiting is dropped. */
  wake(): void {
    this.#wake?.();
  }
}

/**
 * A long run of synchronous work (a read model catching up with a long log) cut into slices of at
 * most `sliceMs`, each followed by a turn of the event loop: a request that arrives during a
 * catch-up of any length waits at most one slice, not the whole catch-up.
 */
export class TimeSlices {
  #started = performance.now();

  constructor(private readonly sliceMs = 5) {}

  /**
   * A wait is not work: after one (a reader idle until new events), the next slice starts now.
   * Without it, the first event after an idle wait found its slice long used up and gave the
   * event loop a turn halfway through a read of a few events, which the relay's pump, woken by the
   * first, took as the end of what there was to publish.
   */
  restart(): void {
    this.#started = performance.now();
  }

  /** Resolves at once while the slice lasts; once it is used up, after the event loop's next turn. */
  async yieldIfDue(): Promise<void> {
    if (performance.now() - this.#started < this.sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#started = performance.now();
  }
}
