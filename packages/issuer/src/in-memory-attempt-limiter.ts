import type { Clock } from '@tessera/timing';
import type { AttemptLimiter, Budget, Throttled } from './attempt-limiter.js';

export interface InMemoryAttemptLimiterOptions {
  /** Seconds in which a budget refills completely. */
  readonly windowSeconds: number;
  readonly clock: Clock;
  /** Budgets held at most; past it the one failed longest ago is forgotten, so memory stays bounded whatever an attacker sends. */
  readonly maxEntries?: number;
}

/** A budget's failures as a level that drains at limit/window per second, and when it was last computed. */
interface Level {
  failures: number;
  at: number;
}

/**
 * The default AttemptLimiter: one process's memory. Budgets that have drained are dropped when
 * next looked at; at most `maxEntries` are kept (100,000 by default, a few MB).
 */
export function createInMemoryAttemptLimiter(options: InMemoryAttemptLimiterOptions): AttemptLimiter {
  const now = () => options.clock.now();
  const maxEntries = options.maxEntries ?? 100_000;
  const windowMs = options.windowSeconds * 1000;
  const levels = new Map<string, Level>();

  /** The level of a budget now, or 0; a drained level is dropped. */
  function current(budget: Budget, at: number): number {
    const level = levels.get(budget.key);
    if (level === undefined) return 0;
    const drained = level.failures - ((at - level.at) * budget.limit) / windowMs;
    if (drained <= 0) {
      levels.delete(budget.key);
      return 0;
    }
    return drained;
  }

  return {
    async check(budgets) {
      const at = now();
      let worst: Throttled | undefined;
      for (const budget of budgets) {
        const failures = current(budget, at);
        if (failures + 1 <= budget.limit) continue;
        // Time for the level to drain to limit - 1, when one more failure fits.
        const retryAfterSeconds = Math.max(1, Math.ceil((((failures + 1 - budget.limit) * windowMs) / budget.limit) / 1000));
        if (worst === undefined || retryAfterSeconds > worst.retryAfterSeconds) worst = { scope: budget.scope, retryAfterSeconds };
      }
      return worst;
    },
    async recordFailure(budgets) {
      const at = now();
      for (const budget of budgets) {
        const failures = current(budget, at) + 1;
        // Re-inserted, so the map's order is the order of last failure: the first entry is the stalest.
        levels.delete(budget.key);
        levels.set(budget.key, { failures, at });
        if (levels.size > maxEntries) levels.delete(levels.keys().next().value!);
      }
    },
    async reset(budgets) {
      for (const budget of budgets) levels.delete(budget.key);
    },
  };
}
