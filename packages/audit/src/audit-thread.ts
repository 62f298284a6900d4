import type { TesseraConfig } from '@tessera/config';
import { InvariantBroken } from '@tessera/contracts';
import { startBackgroundWorker } from '@tessera/host';
import type { AccessAtAnswer, AccessAtQuery } from './index-access-at.js';
import type { EventPage } from './index-events.js';
import { AuditQueryOverBudget } from './query-budget.js';
import { AuditThreadError } from './audit-thread-error.js';
import type { ArchiveRunSummary, AuditQuestion, AuditReply, AuditRequest, AuditThreadData, AuditThreadState } from './audit-thread-protocol.js';
import type { EventQuery } from './event-query.js';

/** Where the audit thread's lines go: the process's logger. */
export interface AuditThreadLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface AuditThread {
  state(): AuditThreadState;
  events(query: EventQuery, budgetMs: number): Promise<EventPage>;
  accessAt(accountId: string, at: number, query: AccessAtQuery, budgetMs: number): Promise<AccessAtAnswer | undefined>;
  /** One archiving run at `now` (epoch ms, the host's clock), holding back what the read models are not past. */
  archive(now: number, consumersPast: bigint | undefined): Promise<ArchiveRunSummary>;
  close(): Promise<void>;
}

/** How long the caller waits for an archiving run (a segment of 200,000 events takes seconds). */
const archiveRunMs = 600_000;

/**
 * How much longer than its budget an answer may take before this thread stops waiting for it: a
 * query past its budget stops at its next row, but one row may take a while on a cold disk.
 */
const graceMs = 2_000;

/**
 * The thread that runs this process's audit index: it follows the log through a read-only store
 * of its own, writes the index and answers the queries, so none of it runs on the thread that
 * answers token requests.
 */
export function startAuditThread(options: {
  readonly file: string;
  readonly config: TesseraConfig;
  readonly log: AuditThreadLogger;
  readonly relayInProcess?: boolean;
  readonly regionalRelay?: boolean;
}): AuditThread {
  const data: AuditThreadData = { file: options.file, config: options.config, relayInProcess: options.relayInProcess ?? false, regionalRelay: options.regionalRelay ?? false };
  let state: AuditThreadState = { position: undefined, caughtUp: false, failure: undefined };
  const thread = startBackgroundWorker<AuditRequest, AuditReply>({
    name: 'audit index',
    besideUrl: import.meta.url,
    entry: 'audit-thread-worker',
    workerData: data,
    onNotice: (notice) => {
      if ('state' in notice) state = notice.state;
      else options.log[notice.log.level](notice.log.fields, notice.log.message);
    },
    onFailure: (error) => {
      state = { ...state, failure: error.message };
      options.log.error({ err: error.message }, 'the audit index thread failed; the audit API answers 503 until the process restarts');
    },
  });

  const ask = (question: AuditQuestion | { readonly kind: 'archive'; readonly now: number; readonly consumersPast: string | null }, budgetMs: number): Promise<AuditReply> =>
    thread.ask((id) => ({ ...question, id }) satisfies AuditRequest, budgetMs + graceMs, () => new AuditQueryOverBudget(budgetMs));

  const answerOf = (reply: AuditReply): AuditReply => {
    if (!('error' in reply)) return reply;
    if (reply.error.code === 'ERR_AUDIT_QUERY_OVER_BUDGET' && reply.error.budgetMs !== undefined) throw new AuditQueryOverBudget(reply.error.budgetMs);
    throw new AuditThreadError(reply.error.code, reply.error.message);
  };

  return {
    state: () => state,
    events: async (query, budgetMs) => {
      const reply = answerOf(await ask({ kind: 'events', query, budgetMs }, budgetMs));
      if (!('events' in reply)) throw new InvariantBroken('the audit thread answered another question');
      return reply.events;
    },
    accessAt: async (accountId, at, query, budgetMs) => {
      const reply = answerOf(await ask({ kind: 'access-at', accountId, at, query, budgetMs }, budgetMs));
      if (!('accessAt' in reply)) throw new InvariantBroken('the audit thread answered another question');
      return reply.accessAt;
    },
    archive: async (now, consumersPast) => {
      const reply = answerOf(await ask({ kind: 'archive', now, consumersPast: consumersPast === undefined ? null : consumersPast.toString() }, archiveRunMs));
      if (!('archived' in reply)) throw new InvariantBroken('the audit thread answered another question');
      return reply.archived;
    },
    close: () => thread.close((id) => ({ id, kind: 'close' }) satisfies AuditRequest),
  };
}
