/**
 * The port that decides whether a token operation may be attempted, from the failures already
 * charged to its budgets. In memory by default (in-memory-attempt-limiter.ts): each instance
 * then counts the failures it saw, so N instances behind a load balancer allow up to N times the
 * budget. A shared store makes the budgets deployment-wide; docs/operations.md says how an
 * adapter implements this interface there (Redis, say).
 */
export interface AttemptLimiter {
  /** Before an attempt: undefined when every budget allows one more failure, else which is spent and for how long. */
  check(budgets: readonly Budget[]): Promise<Throttled | undefined>;
  /** After a failed attempt: one failure charged to each budget. */
  recordFailure(budgets: readonly Budget[]): Promise<void>;
  /** After a successful attempt: these budgets start afresh. */
  reset(budgets: readonly Budget[]): Promise<void>;
}

/**
 * What a failure budget is charged to: one credential id from one address, one address, or one
 * trusted proxy (every client whose address came through it in X-Forwarded-For, together).
 */
export type BudgetScope = 'credential' | 'address' | 'proxy';

/**
 * A budget of failed attempts: `limit` failures, refilled evenly over the limiter's window (a
 * leaky bucket), so a spent budget allows one more attempt every window/limit seconds.
 */
export interface Budget {
  /** Stable across instances and releases: what a shared store keys on. */
  readonly key: string;
  readonly scope: BudgetScope;
  /** Failures allowed in one window; at least 1 (a limit of 0 is a budget not asked for). */
  readonly limit: number;
}

export interface Throttled {
  readonly scope: BudgetScope;
  /** Whole seconds until the spent budget allows one more attempt: the Retry-After value. */
  readonly retryAfterSeconds: number;
}
