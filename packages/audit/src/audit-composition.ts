import { join } from 'node:path';
import { registerGauges, type Host } from '@tessera/host';
import type { AccessAtAnswer, AccessAtQuery, EventPage } from './audit-index.js';
import { startAuditThread } from './audit-thread.js';
import type { EventQuery } from './event-query.js';

/** Where a process and `tessera audit` keep the index: next to the embedded log, in the data folder. */
export const auditIndexFile = (dataDir: string): string => join(dataDir, 'audit-index.db');

/** What the audit routes read: the audit index, whether it can answer yet, and its queries, each within the budget. */
export interface AuditReadModel {
  /** Why it cannot answer now (still catching up, failed), or undefined when it can. */
  unavailable(): string | undefined;
  events(query: EventQuery): Promise<EventPage>;
  /** undefined for an account the index has never seen. `at` in epoch seconds. */
  accessAt(accountId: string, at: number, query: AccessAtQuery): Promise<AccessAtAnswer | undefined>;
}

/**
 * Keeps the audit index of this process's data folder following the log, on a thread of its own:
 * its follower, its commits and its queries never run on the thread that answers token requests,
 * and every query stops at TESSERA_AUDIT_QUERY_BUDGET_MS (a 503 naming the budget). It does not
 * hold up readiness: token operations need nothing from it, and until it has caught up once (a
 * rebuild of a million events takes seconds) the audit routes answer 503 saying how far it got. A
 * failure is logged and answered the same way; it never stops the process.
 */
export function wireAudit(host: Host): AuditReadModel {
  const file = auditIndexFile(host.config.TESSERA_DATA_DIR);
  const thread = startAuditThread({ file, config: host.config, log: host.log });
  host.onClose(() => thread.close());
  const budgetMs = host.config.TESSERA_AUDIT_QUERY_BUDGET_MS;
  registerGauges(host.metrics, {
    tessera_audit_index_position: {
      help: 'Global position of the last event the audit index reflects (compare with tessera_event_store_head_position)',
      read: () => Number(thread.state().position ?? 0n),
    },
  });
  return {
    unavailable: () => {
      const { failure, caughtUp, position } = thread.state();
      if (failure !== undefined) return `the audit index failed: ${failure}`;
      if (caughtUp) return undefined;
      return `the audit index is catching up with the event log (at position ${position ?? 'none'}); try again shortly`;
    },
    events: (query) => thread.events(query, budgetMs),
    accessAt: (accountId, at, query) => thread.accessAt(accountId, at, query, budgetMs),
  };
}
