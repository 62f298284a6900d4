import { Worker } from 'node:worker_threads';
import type { TesseraConfig } from '@tessera/config';
import { workerThreadEntry } from '@tessera/host';
import { AuditQueryOverBudget, type AccessAtAnswer, type AccessAtQuery, type EventPage } from './audit-index.js';
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
export function startAuditThread(options: { readonly file: string; readonly config: TesseraConfig; readonly log: AuditThreadLogger; readonly relayInProcess?: boolean }): AuditThread {
  const data: AuditThreadData = { file: options.file, config: options.config, relayInProcess: options.relayInProcess ?? false };
  const entry = workerThreadEntry(import.meta.url, 'audit-thread-worker');
  const worker = new Worker(entry.url, { workerData: data, execArgv: entry.execArgv });
  worker.unref();
  let state: AuditThreadState = { position: undefined, caughtUp: false, failure: undefined };
  let nextId = 0;
  const pending = new Map<number, { resolve: (reply: AuditReply) => void; reject: (error: unknown) => void }>();
  let closing: Promise<void> | undefined;

  worker.on('message', (reply: AuditReply) => {
    if ('state' in reply) state = reply.state;
    else if ('log' in reply) options.log[reply.log.level](reply.log.fields, reply.log.message);
    else {
      pending.get(reply.id)?.resolve(reply);
      pending.delete(reply.id);
    }
  });
  let exited = false;
  worker.once('exit', () => (exited = true));
  const fail = (error: unknown) => {
    if (closing) return;
    const failure = error instanceof Error ? error.message : String(error);
    state = { ...state, failure };
    options.log.error({ err: failure }, 'the audit index thread failed; the audit API answers 503 until the process restarts');
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the audit index thread exited (${code})`)));

  function ask(question: AuditQuestion | { readonly kind: 'archive'; readonly now: number; readonly consumersPast: string | null }, budgetMs: number): Promise<AuditReply> {
    const id = (nextId += 1);
    worker.ref();
    return new Promise<AuditReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new AuditQueryOverBudget(budgetMs));
      }, budgetMs + graceMs);
      pending.set(id, {
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      worker.postMessage({ ...question, id } satisfies AuditRequest);
    }).finally(() => {
      if (pending.size === 0) worker.unref();
    });
  }

  const answerOf = (reply: AuditReply): AuditReply => {
    if (!('error' in reply)) return reply;
    if (reply.error.code === 'ERR_AUDIT_QUERY_OVER_BUDGET' && reply.error.budgetMs !== undefined) throw new AuditQueryOverBudget(reply.error.budgetMs);
    throw Object.assign(new Error(reply.error.message), reply.error.code === undefined ? {} : { code: reply.error.code });
  };

  return {
    state: () => state,
    events: async (query, budgetMs) => {
      const reply = answerOf(await ask({ kind: 'events', query, budgetMs }, budgetMs));
      if (!('events' in reply)) throw new Error('the audit thread answered another question');
      return reply.events;
    },
    accessAt: async (accountId, at, query, budgetMs) => {
      const reply = answerOf(await ask({ kind: 'access-at', accountId, at, query, budgetMs }, budgetMs));
      if (!('accessAt' in reply)) throw new Error('the audit thread answered another question');
      return reply.accessAt;
    },
    archive: async (now, consumersPast) => {
      const reply = answerOf(await ask({ kind: 'archive', now, consumersPast: consumersPast === undefined ? null : consumersPast.toString() }, archiveRunMs));
      if (!('archived' in reply)) throw new Error('the audit thread answered another question');
      return reply.archived;
    },
    close: () => {
      closing ??= (async () => {
        if (exited) return;
        worker.ref();
        const closed = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.postMessage({ id: (nextId += 1), kind: 'close' } satisfies AuditRequest);
        // The thread writes what it gathered and closes the index; if it does not within 10 s, it is stopped.
        const timer = setTimeout(() => void worker.terminate(), 10_000);
        await closed;
        clearTimeout(timer);
      })();
      return closing;
    },
  };
}
