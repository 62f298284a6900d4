import { join } from 'node:path';
import type { GuardedEventStore } from '@tessera/event-store';
import { registerGauges, untilAvailable, type Host } from '@tessera/host';
import { AuditIndex, type AccessAtAnswer, type EventPage } from './audit-index.js';
import type { EventQuery } from './event-query.js';
import { followIntoIndex, type IndexFollower } from './index-follower.js';

/** Where a process and `tessera audit` keep the index: next to the embedded log, in the data folder. */
export const auditIndexFile = (dataDir: string): string => join(dataDir, 'audit-index.db');

/** What the audit routes and commands read: the audit index, and whether it can answer yet. */
export interface AuditReadModel {
  /** Why it cannot answer now (still catching up, failed), or undefined when it can. */
  unavailable(): string | undefined;
  events(query: EventQuery): EventPage;
  /** undefined for an account the index has never seen. */
  accessAt(accountId: string, at: number): AccessAtAnswer | undefined;
}

/**
 * Keeps the audit index of this process's data folder following the log. It does not hold up
 * readiness: token operations need nothing from it, and until it has caught up once (a rebuild
 * of a million events takes seconds) the audit routes answer 503 saying how far it got. A
 * failure to write it is logged and answered the same way; it never stops the process.
 */
export function wireAudit(host: Host, store: GuardedEventStore): AuditReadModel {
  const started = host.clock.now();
  const file = auditIndexFile(host.config.TESSERA_DATA_DIR);
  const index = AuditIndex.open(file);
  // Registered before the follower, so it is closed after it (hosts close in reverse order).
  host.onClose(async () => index.close());
  if (index.rebuilt) host.log.warn({ file }, 'the audit index was unreadable or of another version: rebuilding it from the event log');
  let caughtUp = false;
  let failure: string | undefined;
  let follower: IndexFollower | undefined;
  let closed = false;
  host.onClose(async () => {
    closed = true;
    await follower?.close();
  });
  const fail = (error: unknown) => {
    failure = error instanceof Error ? error.message : String(error);
    host.log.error({ err: error, file }, 'the audit index stopped following the log; the audit API answers 503 until the process restarts');
  };
  untilAvailable(store, () => index.forgetIfAnotherLog(store))
    .then(async (forgotten) => {
      if (closed) return;
      if (forgotten) host.log.warn({ file }, 'the audit index was built from another event log: rebuilding it');
      follower = followIntoIndex(store, index, { onError: fail });
      await follower.caughtUp;
      caughtUp = true;
      host.log.info({ position: index.position()?.toString(), seconds: (host.clock.now() - started) / 1000 }, 'audit index caught up with the event log');
    })
    .catch(fail);
  registerGauges(host.metrics, {
    tessera_audit_index_position: {
      help: 'Global position of the last event the audit index reflects (compare with tessera_event_store_head_position)',
      read: () => Number(index.position() ?? 0n),
    },
  });

  return {
    unavailable: () => {
      if (failure !== undefined) return `the audit index failed: ${failure}`;
      if (caughtUp) return undefined;
      return `the audit index is catching up with the event log (at position ${index.position() ?? 'none'}); try again shortly`;
    },
    events: (query) => index.events(query),
    accessAt: (accountId, at) => index.accessAt(accountId, at),
  };
}
