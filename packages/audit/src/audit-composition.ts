import { join } from 'node:path';
import { registerCounter, registerGauges, type Host } from '@tessera/host';
import type { AccessAtAnswer, AccessAtQuery } from './index-access-at.js';
import type { EventPage } from './index-events.js';
import type { ArchiveRunSummary, ArchiveState } from './audit-thread-protocol.js';
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
  /** The archive's anchors in the log (key fingerprints and manifest head), once the audit thread has read them. */
  archivePins(): ArchiveState['pins'];
}

/** The audit index of a process, with its archive: what wireAudit wires. */
export interface WiredAudit extends AuditReadModel {
  /** Runs archiving now, at the host's clock (tests; the schedule runs it every TESSERA_ARCHIVE_INTERVAL). */
  archiveNow(): Promise<ArchiveRunSummary>;
  /** The archive as last seen by the audit thread. */
  archiveState(): ArchiveState | undefined;
}

/**
 * Keeps the audit index of this process's data folder following the log, on a thread of its own:
 * its follower, its commits and its queries never run on the thread that answers token requests,
 * and every query stops at TESSERA_AUDIT_QUERY_BUDGET_MS (a 503 naming the budget). It does not
 * hold up readiness: token operations need nothing from it, and until it has caught up once (a
 * rebuild of a million events takes seconds) the audit routes answer 503 saying how far it got. A
 * failure is logged and answered the same way; it never stops the process.
 */
export function wireAudit(host: Host, options: { readonly relayInProcess?: boolean; readonly regionalRelay?: boolean } = {}): WiredAudit {
  const file = auditIndexFile(host.config.TESSERA_DATA_DIR);
  const thread = startAuditThread({ file, config: host.config, log: host.log, relayInProcess: options.relayInProcess ?? false, regionalRelay: options.regionalRelay ?? false });
  host.onClose(() => thread.close());
  const budgetMs = host.config.TESSERA_AUDIT_QUERY_BUDGET_MS;
  registerGauges(host.metrics, {
    tessera_audit_index_position: {
      help: 'Global position of the last event the audit index reflects (compare with tessera_event_store_head_position)',
      read: () => Number(thread.state().position ?? 0n),
    },
  });
  let archiveFailures = 0;
  /**
   * The index's own position is the thread's to hold. The process's read models, while they catch
   * up, hold archiving at what they have applied: nothing past it is archived and removed. Once
   * live they have applied every event of their types up to the head, and archiving only ever
   * removes events older than the hot window, so they hold nothing back (docs/decisions/0017).
   */
  const consumersPast = (): bigint | undefined => {
    const lowest = thread.state().position;
    if (host.readModels.live()) return lowest;
    const position = host.readModels.lastPosition();
    if (position === undefined) return undefined;
    return lowest === undefined || position < lowest ? position : lowest;
  };
  const archiveNow = () =>
    thread.archive(host.clock.now(), consumersPast()).catch((error: unknown) => {
      archiveFailures += 1;
      throw error;
    });
  // Archiving runs on the audit thread, off the request thread; a failed run is logged there and retried at the next.
  const stopArchiving = host.scheduler.every(host.config.TESSERA_ARCHIVE_INTERVAL * 1000, () => {
    if (thread.state().caughtUp) archiveNow().catch(() => undefined);
  });
  host.onClose(async () => stopArchiving());
  const archive = () => thread.state().archive;
  const seconds = (ms: number) => Math.max(0, ms / 1000);
  const started = host.clock.now();
  registerGauges(host.metrics, {
    tessera_hot_log_bytes: { help: 'Bytes the hot event log takes on disk (SQLite: events.db and its WAL), as of the last archiving run', read: () => archive()?.hotLogBytes ?? 0 },
    tessera_audit_index_bytes: { help: 'Bytes the hot audit index takes on disk (audit-index.db and its WAL), as of the last archiving run', read: () => archive()?.indexBytes ?? 0 },
    tessera_archive_bytes: { help: 'Bytes of the archive\'s live segments (Parquet, zstd)', read: () => archive()?.archiveBytes ?? 0 },
    tessera_archive_segments: { help: 'Archive segments listed in the manifest and not deleted', read: () => archive()?.segments ?? 0 },
    tessera_hot_oldest_event_age_seconds: {
      help: 'Age of the oldest event still in the hot log of a stream that retention applies to (families, v1 tokens, failure counts)',
      read: () => {
        const oldest = archive()?.oldestHotEventAt;
        return oldest === undefined ? 0 : seconds(host.clock.now() - oldest);
      },
    },
    tessera_archive_lag_seconds: {
      help: 'Seconds since the last archiving run that completed (since the start, before the first)',
      read: () => seconds(host.clock.now() - (archive()?.lastRunAt ?? started)),
    },
    tessera_archive_last_verify_ok: {
      help: '1 when the last verification of the archive found every segment, the chain and the signatures whole; 0 when it found a break (or none has run yet)',
      read: () => (archive()?.verifiedOk === true ? 1 : 0),
    },
    tessera_archive_broken: {
      help: '1 when the archive failed its verification against the anchors in the log (a key not recorded, a changed entry or segment, a cut tail, a missing manifest/): audit answers that reach into it are 503 until it is restored',
      read: () => (archive()?.verifiedOk === false ? 1 : 0),
    },
    tessera_archive_foreign_files: {
      help: 'Files in the archive folder that Tessera did not write, as the last archiving run found them: left alone, never deleted',
      read: () => archive()?.foreign.length ?? 0,
    },
  });
  registerCounter(host.metrics, 'tessera_archive_failures_total', 'Archiving runs that failed (the archive folder unwritable or full, the store unavailable); the hot log keeps every event meanwhile', () => archiveFailures);
  return {
    archiveNow,
    archiveState: archive,
    unavailable: () => {
      const { failure, caughtUp, position } = thread.state();
      if (failure !== undefined) return `the audit index failed: ${failure}`;
      if (caughtUp) return undefined;
      return `the audit index is catching up with the event log (at position ${position ?? 'none'}); try again shortly`;
    },
    archivePins: () => archive()?.pins,
    events: (query) => thread.events(query, budgetMs),
    accessAt: (accountId, at, query) => thread.accessAt(accountId, at, query, budgetMs),
  };
}
