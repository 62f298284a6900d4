import type { TesseraConfig } from '@tessera/config';
import type { AccessAtAnswer, AccessAtQuery, EventPage } from './audit-index.js';
import type { EventQuery } from './event-query.js';

/** What the audit thread is started with. */
export interface AuditThreadData {
  /** The index file (`audit-index.db` in the data folder). */
  readonly file: string;
  /** The process's configuration: the thread opens the same store, read-only. */
  readonly config: TesseraConfig;
}

/** A query for the audit thread, answered within its budget. */
export type AuditQuestion =
  | { readonly kind: 'events'; readonly query: EventQuery; readonly budgetMs: number }
  | { readonly kind: 'access-at'; readonly accountId: string; readonly at: number; readonly query: AccessAtQuery; readonly budgetMs: number };

/** Main thread → audit thread. */
export type AuditRequest = (AuditQuestion & { readonly id: number }) | { readonly id: number; readonly kind: 'close' };

/** Audit thread → main thread. */
export type AuditReply =
  | { readonly id: number; readonly events: EventPage }
  | { readonly id: number; readonly accessAt: AccessAtAnswer | undefined }
  | { readonly id: number; readonly error: { readonly code: string | undefined; readonly message: string; readonly budgetMs?: number } }
  | { readonly id: number; readonly closed: true }
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
}
