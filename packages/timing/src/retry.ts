import { systemClock, type Clock } from './clock.js';
import { InvalidTimingArgument } from './invalid-timing-argument.js';
import { systemScheduler, type Scheduler } from './scheduler.js';

/** How long to wait between tries: `initialMs` after the first failure, doubling up to `maxMs`. */
export interface BackoffPolicy {
  readonly initialMs: number;
  /** The longest wait; equal to `initialMs` for a fixed pace. */
  readonly maxMs: number;
}

/** What the helper logs through: pino's shape, and the feed's. */
export interface RetryLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

export interface RetryLogging {
  readonly logger: RetryLogger;
  /** Logged at warn for the first failure and every `every`-th after it, with the error and the count. */
  readonly failing: string;
  /** Logged at info once a try succeeds after failures, with how long they lasted. */
  readonly recovered?: string;
  /** Default 10: an outage is seen at once without a line per try. */
  readonly every?: number;
  /** More fields for each failing line: what is pending, which topic. */
  readonly fields?: () => Record<string, unknown>;
}

export interface RetryOptions {
  readonly backoff: BackoffPolicy;
  readonly log?: RetryLogging;
  readonly clock?: Clock;
  /** Where `run` waits between tries; default the machine's timers. */
  readonly scheduler?: Scheduler;
}

export interface RunOptions {
  /** Errors worth another try; any other rejects `run` at once. Default: every error. */
  readonly retryable?: (error: unknown) => boolean;
  /** Stops the tries (the wait in progress ends at once); `run` then resolves not done. */
  readonly signal?: AbortSignal;
  /** Epoch ms: no wait may end after it; `run` resolves not done rather than start one that would. */
  readonly deadlineMs?: number;
}

export type RetryOutcome<T> = { readonly done: true; readonly value: T } | { readonly done: false; readonly error: unknown };

/**
 * The one retry helper: every loop in Tessera that tries again after a failure (a store coming
 * back, a topic not made yet, a consumer kafkajs gave up on, a signing key to publish) counts its
 * failures here. It keeps the backoff, when the failures began (`failingSinceMs`, for lag figures
 * and /readyz), and logs the first failure and every Nth, then the recovery: an outage is visible
 * at once without flooding the log.
 *
 * Two ways to drive it: `run(attempt)` for a loop that is one async function, and
 * `failed()`/`succeeded()` for one driven by events (a subscription that fails later, a crash).
 */
export class Retry {
  readonly #options: RetryOptions;
  readonly #clock: Clock;
  readonly #scheduler: Scheduler;
  #failures = 0;
  #failingSinceMs: number | undefined;
  #nextWaitMs: number;

  constructor(options: RetryOptions) {
    if (!(options.backoff.initialMs >= 0 && options.backoff.maxMs >= options.backoff.initialMs)) throw new InvalidTimingArgument('backoff: 0 <= initialMs <= maxMs');
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#scheduler = options.scheduler ?? systemScheduler;
    this.#nextWaitMs = options.backoff.initialMs;
  }

  /** Failures since the last success. */
  get failures(): number {
    return this.#failures;
  }

  /** Epoch ms of the first failure since the last success; undefined while things work. */
  get failingSinceMs(): number | undefined {
    return this.#failingSinceMs;
  }

  /** Counts a failure, logging it when due; returns how long to wait before the next try. */
  failed(error: unknown): number {
    this.#failures += 1;
    this.#failingSinceMs ??= this.#clock.now();
    const log = this.#options.log;
    if (log && (this.#failures === 1 || this.#failures % (log.every ?? 10) === 0)) {
      log.logger.warn({ err: error, attempts: this.#failures, ...log.fields?.() }, log.failing);
    }
    const wait = this.#nextWaitMs;
    this.#nextWaitMs = Math.min(this.#nextWaitMs * 2, this.#options.backoff.maxMs);
    return wait;
  }

  /** A try worked: logs the recovery after failures, and starts the backoff over. */
  succeeded(): void {
    const log = this.#options.log;
    if (this.#failingSinceMs !== undefined && log?.recovered) {
      log.logger.info({ outageMs: this.#clock.now() - this.#failingSinceMs, attempts: this.#failures }, log.recovered);
    }
    this.#failures = 0;
    this.#failingSinceMs = undefined;
    this.#nextWaitMs = this.#options.backoff.initialMs;
  }

  /** Runs `attempt` until it succeeds, waiting between tries; not done if stopped first. */
  async run<T>(attempt: () => Promise<T>, options: RunOptions = {}): Promise<RetryOutcome<T>> {
    for (;;) {
      if (options.signal?.aborted) return { done: false, error: options.signal.reason };
      try {
        const value = await attempt();
        this.succeeded();
        return { done: true, value };
      } catch (error) {
        if (options.retryable && !options.retryable(error)) throw error;
        const wait = this.failed(error);
        if (options.deadlineMs !== undefined && this.#clock.now() + wait > options.deadlineMs) return { done: false, error };
        if (options.signal?.aborted) return { done: false, error };
        await this.#scheduler.sleep(wait, options.signal);
      }
    }
  }
}

/**
 * Waits `ms`, or less if `signal` aborts first, on the machine's timers. The timer does not keep
 * the process alive: a loop waiting to try again must not hold up an exit.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return systemScheduler.sleep(ms, signal);
}
