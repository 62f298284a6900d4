import type Database from 'better-sqlite3';
import { CodedError } from '@tessera/contracts';

/** A query stopped at its time budget: a 503 over HTTP, exit 4 in the CLI. */
export class AuditQueryOverBudget extends CodedError {
  readonly code = 'ERR_AUDIT_QUERY_OVER_BUDGET';
  constructor(readonly budgetMs: number) {
    super(`the audit query ran over its time budget of ${budgetMs} ms (TESSERA_AUDIT_QUERY_BUDGET_MS): narrow it (an account, a family, a shorter since/until, a smaller limit)`);
    this.name = 'AuditQueryOverBudget';
  }
}

/**
 * The time budget of the query running on one connection. Every query's WHERE calls
 * `tessera_in_budget()` once per row it visits, so SQLite's statement stops at the first row past
 * the deadline, whatever plan it chose: better-sqlite3 offers no interrupt, and this is one. Made
 * before any statement that calls the function is prepared: such a statement does not compile
 * without it.
 */
export class QueryBudget {
  /** The running query's budget: performance.now() past `deadline` stops it at its next row. */
  private running: { readonly deadline: number; readonly ms: number } | undefined;

  constructor(db: Database.Database) {
    db.function('tessera_in_budget', { deterministic: false }, () => {
      if (this.running !== undefined && performance.now() > this.running.deadline) throw new AuditQueryOverBudget(this.running.ms);
      return 1;
    });
  }

  /** Runs `run` with `budgetMs` to spend (no limit when undefined); AuditQueryOverBudget past it. */
  within<T>(budgetMs: number | undefined, run: () => T): T {
    if (budgetMs === undefined) return run();
    this.running = { deadline: performance.now() + budgetMs, ms: budgetMs };
    try {
      return run();
    } finally {
      this.running = undefined;
    }
  }
}
