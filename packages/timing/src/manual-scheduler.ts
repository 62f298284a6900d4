import type { ManualClock } from './clock.js';
import { InvalidTimingArgument } from './invalid-timing-argument.js';
import { sleepOn, type Cancel, type Scheduler } from './scheduler.js';

interface Timer {
  dueMs: number;
  /** Order of scheduling: two timers due at one instant run in the order they were made. */
  readonly order: number;
  readonly periodMs: number | undefined;
  readonly run: () => void;
}

/**
 * Timers that run only when the test moves time: for tests of expiry sweeps, retries and pauses,
 * which then take no wall time and cannot race the machine's timers. Bound to a ManualClock, whose
 * time is the scheduler's time: `advance` and `advanceTo` move that clock and run what falls due.
 *
 * What it awaits: before each due timer runs, and once more when the target is reached, one turn
 * of the event loop (`setImmediate`). The microtask queue drains completely before that turn, so a
 * callback whose async work awaits only promises (no socket, file or real timer) has settled
 * before the next timer runs and before `advance` resolves. Work that waits for real I/O may still
 * be under way: poll for its outcome.
 */
export class ManualScheduler implements Scheduler {
  readonly #clock: ManualClock;
  readonly #timers = new Set<Timer>();
  #made = 0;

  constructor(clock: ManualClock) {
    this.#clock = clock;
  }

  /** The clock this scheduler moves. */
  get clock(): ManualClock {
    return this.#clock;
  }

  /** Timers waiting to run: a test can see that a sweep or a retry was scheduled. */
  get pending(): number {
    return this.#timers.size;
  }

  after(ms: number, run: () => void): Cancel {
    return this.#add(ms, undefined, run);
  }

  every(ms: number, run: () => void): Cancel {
    if (!(ms > 0)) throw new InvalidTimingArgument('a repeating timer needs a period above 0 ms');
    return this.#add(ms, ms, run);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Moves the clock `ms` forward, running every timer that falls due on the way, in time order. */
  advance(ms: number): Promise<void> {
    if (!(ms >= 0)) return Promise.reject(new InvalidTimingArgument('a clock only moves forward'));
    return this.advanceTo(this.#clock.now() + ms);
  }

  /**
   * Moves the clock to epoch ms `targetMs`, running every timer due by then in time order, each
   * with the clock at its due time (or at the present, for one due before it: the clock never
   * goes back). A timer made by a callback runs too if it falls due by `targetMs`.
   */
  async advanceTo(targetMs: number): Promise<void> {
    if (targetMs < this.#clock.now()) throw new InvalidTimingArgument('a clock only moves forward');
    for (;;) {
      await oneTurn();
      const next = this.#next(targetMs);
      if (!next) break;
      if (next.dueMs > this.#clock.now()) this.#clock.set(next.dueMs);
      if (next.periodMs === undefined) this.#timers.delete(next);
      else next.dueMs += next.periodMs;
      next.run();
    }
    this.#clock.set(targetMs);
    await oneTurn();
  }

  /** Runs what is due at the present instant, without moving the clock. */
  runDue(): Promise<void> {
    return this.advanceTo(this.#clock.now());
  }

  #next(targetMs: number): Timer | undefined {
    let next: Timer | undefined;
    for (const timer of this.#timers) {
      if (timer.dueMs > targetMs) continue;
      if (!next || timer.dueMs < next.dueMs || (timer.dueMs === next.dueMs && timer.order < next.order)) next = timer;
    }
    return next;
  }

  #add(ms: number, periodMs: number | undefined, run: () => void): Cancel {
    const timer: Timer = { dueMs: this.#clock.now() + Math.max(0, ms), order: this.#made++, periodMs, run };
    this.#timers.add(timer);
    return () => void this.#timers.delete(timer);
  }
}

const oneTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
