import type { ArchiveHead } from '@tessera/archive';
import type { TesseraConfig } from '@tessera/config';
import type { AccessAtAnswer, AccessAtQuery } from './index-access-at.js';
import type { EventPage } from './index-events.js';
import type { EventQuery } from './event-query.js';

/** What the audit thread is started with. */
export interface AuditThreadData {
  /** The index file (`audit-index.db` in the data folder). */
  readonly file: string;
  /** The process's configuration: the thread opens the same store, read-only. */
  readonly config: TesseraConfig;
  /** This process runs the relay (the all-in-one with Kafka): archiving waits for its checkpoints in the data folder. */
  readonly relayInProcess: boolean;
  /** That relay also publishes the account and family topics (a process with a region): archiving waits for their checkpoints too. */
  readonly regionalRelay: boolean;
}

/** A query for the audit thread, answered within its budget. */
export type AuditQuestion =
  | { readonly kind: 'events'; readonly query: EventQuery; readonly budgetMs: number }
  | { readonly kind: 'access-at'; readonly accountId: string; readonly at: number; readonly query: AccessAtQuery; readonly budgetMs: number };

/** Main thread → audit thread. */
export type AuditRequest =
  | (AuditQuestion & { readonly id: number })
  | { readonly id: number; readonly kind: 'close' }
  /** An archiving run at `now` (the host's clock, epoch ms); `consumersPast`: the lowest position this process's read models are past. */
  | { readonly id: number; readonly kind: 'archive'; readonly now: number; readonly consumersPast: string | null };

/** What an archiving run did, for the caller and the log. */
export interface ArchiveRunSummary {
  readonly archived: number;
  readonly segment: number | undefined;
  readonly deletedSegments: number;
  readonly finished: number;
}

/** The archive as the thread last saw it: what /metrics and `archive status` read. */
export interface ArchiveState {
  /** Epoch ms (the host's clock) of the last run that completed, and whether the last run failed. */
  readonly lastRunAt: number | undefined;
  readonly lastRunFailure: string | undefined;
  readonly hotLogBytes: number | undefined;
  readonly indexBytes: number;
  readonly archiveBytes: number;
  readonly segments: number;
  readonly oldestHotEventAt: number | undefined;
  /** The last verification: whether the archive was whole, and the first break found. */
  readonly verifiedOk: boolean | undefined;
  readonly verifyBreak: string | undefined;
  /** The anchors in the log the archive was checked against: the keys' fingerprints and the head. */
  readonly pins: { readonly keys: readonly string[]; readonly head: ArchiveHead | undefined } | undefined;
  /** Files in the archive folder Tessera did not write, as the last run found them (left alone). */
  readonly foreign: readonly string[];
}

/** Audit thread → main thread. */
export type AuditReply =
  | { readonly id: number; readonly events: EventPage }
  | { readonly id: number; readonly accessAt: AccessAtAnswer | undefined }
  | { readonly id: number; readonly error: { readonly code: string | undefined; readonly message: string; readonly budgetMs?: number } }
  | { readonly id: number; readonly closed: true }
  | { readonly id: number; readonly archived: ArchiveRunSummary }
  /** The index's state, sent whenever it changes: what /readyz-like answers and /metrics read. */
  | { readonly state: AuditThreadState }
  /** A line for the process's log. */
  | { readonly log: { readonly level: 'info' | 'warn' | 'error'; readonly message: string; readonly fields: Record<string, unknown> } };

export interface AuditThreadState {
  /** The log position the index reflects. */
  readonly position: bigint | undefined;
  /** Caught up with the log once since the thread started. */
  readonly caughtUp: boolean;
  /** Set when the index failed for good: the routes answer 503 naming it. */
  readonly failure: string | undefined;
  readonly archive?: ArchiveState;
}
