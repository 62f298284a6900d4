import type { TesseraConfig } from '@tessera/config';
import { EventStoreUnavailable } from '@tessera/event-store';
import { startBackgroundWorker } from '@tessera/host';
import { systemClock, type Clock } from '@tessera/timing';
import type { FamiliesReply, FamiliesRequest, FamiliesThreadData, FamiliesThreadState } from './families-thread-protocol.js';

/** What an account revocation asks of the families read model. */
export interface FamiliesReadModel {
  /** Seconds: the longest exp − iat among every access token read so far, which a cut must outlive. */
  longestTokenLifetime(): Promise<number>;
  /**
   * The families of the account that are not revoked and can still produce or carry a token, once
   * the model has applied the event at `position` (undefined: as it stands); undefined when it has
   * not within `timeoutMs`.
   */
  liveFamiliesOnceAt(position: bigint | undefined, accountId: string, timeoutMs: number): Promise<readonly string[] | undefined>;
}

/** What the admin list of an account's families asks of the families read model. */
export interface FamiliesPages {
  /** A page of the account's live families in family id order, after the family id `after`, as the model stands. */
  liveFamiliesPage(accountId: string, after: string | undefined, limit: number): Promise<{ readonly familyIds: readonly string[]; readonly more: boolean }>;
}

export interface FamiliesThread extends FamiliesReadModel, FamiliesPages {
  state(): FamiliesThreadState;
  /** True once the model has caught up with the log; false if it has not within `timeoutMs`. */
  caughtUp(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Where the families thread's lines go: the process's logger. */
export interface FamiliesThreadLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** How much longer than the wait asked for an answer may take before the caller stops waiting. */
const graceMs = 2_000;

/**
 * Starts the admin API's families read model on a thread of its own (families-thread-worker.ts):
 * it reads the whole log's token events there, at the lowest CPU priority, and answers account
 * revocations by message. The thread reads the host's clock: each request carries it.
 */
export function startFamiliesThread(options: { readonly config: TesseraConfig; readonly clock: Clock; readonly log: FamiliesThreadLogger }): FamiliesThread {
  const data: FamiliesThreadData = { config: options.config, clockOffsetMs: options.clock.now() - systemClock.now() };
  let state: FamiliesThreadState = { caughtUp: false, size: 0, failure: undefined };
  const caughtUpWaiters = new Set<() => void>();
  const thread = startBackgroundWorker<FamiliesRequest, FamiliesReply>({
    name: 'admin families read model',
    besideUrl: import.meta.url,
    entry: 'families-thread-worker',
    workerData: data,
    onNotice: (notice) => {
      if ('log' in notice) {
        options.log[notice.log.level](notice.log.fields, notice.log.message);
        return;
      }
      state = notice.state;
      if (state.caughtUp) for (const wake of caughtUpWaiters) wake();
    },
    onFailure: (error) => {
      state = { ...state, failure: error.message };
      options.log.error({ err: error.message }, 'the admin families read model thread failed; this account revocation answers 503, and the next one starts the thread again');
    },
  });

  type Question = FamiliesRequest extends infer R ? (R extends { kind: 'close' } ? never : Omit<R, 'id' | 'nowMs'>) : never;
  function ask(question: Question, waitMs: number): Promise<FamiliesReply> {
    if (state.failure !== undefined) return Promise.reject(new EventStoreUnavailable(`the admin families read model failed: ${state.failure}`));
    return thread.ask(
      // Cast: Question is FamiliesRequest without the two fields added here.
      (id) => ({ ...question, id, nowMs: options.clock.now() }) as FamiliesRequest,
      waitMs + graceMs,
      () => new EventStoreUnavailable('the admin families read model did not answer in time'),
    );
  }
  const failed = (reply: FamiliesReply): never => {
    throw new EventStoreUnavailable('error' in reply ? `the admin families read model failed: ${reply.error}` : 'the admin families read model answered another question');
  };

  return {
    state: () => state,
    caughtUp: async (timeoutMs) => {
      if (state.caughtUp) return true;
      let wake: (() => void) | undefined;
      let timer: NodeJS.Timeout | undefined;
      try {
        return await new Promise<boolean>((resolve) => {
          wake = () => resolve(true);
          caughtUpWaiters.add(wake);
          timer = setTimeout(() => resolve(false), timeoutMs);
        });
      } finally {
        clearTimeout(timer);
        if (wake) caughtUpWaiters.delete(wake);
      }
    },
    longestTokenLifetime: async () => {
      const reply = await ask({ kind: 'longest-token-lifetime' }, 0);
      return 'longest' in reply ? reply.longest : failed(reply);
    },
    liveFamiliesOnceAt: async (position, accountId, timeoutMs) => {
      const reply = await ask({ kind: 'live-families', accountId, position: position === undefined ? null : position.toString(), timeoutMs }, timeoutMs);
      if (!('families' in reply)) return failed(reply);
      return reply.families ?? undefined;
    },
    liveFamiliesPage: async (accountId, after, limit) => {
      const reply = await ask({ kind: 'live-families-page', accountId, after: after ?? null, limit }, 0);
      return 'page' in reply ? reply.page : failed(reply);
    },
    close: () => thread.close((id) => ({ id, kind: 'close' }) satisfies FamiliesRequest),
  };
}
