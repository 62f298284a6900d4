import { InvalidTimingArgument } from './invalid-timing-argument.js';

/** Stops a timer: it does not run (again). Calling it twice, or after a one-shot ran, does nothing. */
export type Cancel = () => void;

/**
 * Where timers come from, beside the Clock: a sweep, a retry's wait, a probe. Everything in
 * Tessera that waits for time to pass on its own behalf takes a Scheduler, so a test moves the
 * time (ManualScheduler) instead of sleeping until it passes.
 *
 * A timer's callback returns nothing: one that starts async work handles that work's failure
 * itself, as it would with setTimeout.
 */
export interface Scheduler {
  /** Runs `run` once, `ms` from now. */
  after(ms: number, run: () => void): Cancel;
  /** Runs `run` every `ms` (more than 0), the first time `ms` from now. */
  every(ms: number, run: () => void): Cancel;
  /** Resolves `ms` from now, or at once when `signal` aborts (or has). Never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The machine's timers. None of them keeps the process alive (each is unref'd): a sweep, or a
 * loop waiting to try again, must not hold up an exit.
 */
export const systemScheduler: Scheduler = {
  after(ms, run) {
    const timer = setTimeout(run, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
  every(ms, run) {
    if (!(ms > 0)) throw new InvalidTimingArgument('a repeating timer needs a period above 0 ms');
    const timer = setInterval(run, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
  sleep: (ms, signal) => sleepOn(systemScheduler, ms, signal),
};

/** `sleep` for any scheduler: a one-shot timer that an abort ends early. */
export function sleepOn(scheduler: Pick<Scheduler, 'after'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const cancel = scheduler.after(ms, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}
