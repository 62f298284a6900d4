import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { GuardedEventStore } from '@tessera/event-store';
import { registerGauges, untilAvailable, type Host } from '@tessera/server';
import { AuditIndex } from './audit-index.js';
import { auditRoutes, type AuditReadModel, type AuditRoutesOptions } from './audit-routes.js';
import { followIntoIndex, type IndexFollower } from './index-follower.js';

/** Where a process and `tessera audit` keep the index: next to the embedded log, in the data folder. */
export const auditIndexFile = (dataDir: string): string => join(dataDir, 'audit-index.db');

export interface AuditParts {
  readonly readModel: AuditReadModel;
  /** The audit routes for the admin listener, behind the admin-token check given. */
  routes(requireScope: AuditRoutesOptions['requireScope']): (app: FastifyInstance) => Promise<void>;
}

/**
 * Keeps the audit index of this process's data folder following the log. It does not hold up
 * readiness: token operations need nothing from it, and until it has caught up once (a rebuild
 * of a million events takes seconds) the audit routes answer 503 saying how far it got. A
 * failure to write it is logged and answered the same way; it never stops the process.
 */
export function wireAudit(host: Host, store: GuardedEventStore): AuditParts {
  const started = Date.now();
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
      host.log.info({ position: index.position()?.toString(), seconds: (Date.now() - started) / 1000 }, 'audit index caught up with the event log');
    })
    .catch(fail);
  registerGauges(host.metrics, {
    tessera_audit_index_position: {
      help: 'Global position of the last event the audit index reflects (compare with tessera_event_store_head_position)',
      read: () => Number(index.position() ?? 0n),
    },
  });

  const readModel: AuditReadModel = {
    unavailable: () => {
      if (failure !== undefined) return `the audit index failed: ${failure}`;
      if (caughtUp) return undefined;
      return `the audit index is catching up with the event log (at position ${index.position() ?? 'none'}); try again shortly`;
    },
    events: (query) => index.events(query),
    accessAt: (accountId, at) => index.accessAt(accountId, at),
  };
  return { readModel, routes: (requireScope) => auditRoutes({ audit: readModel, requireScope }) };
}
