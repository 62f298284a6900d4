import { Worker } from 'node:worker_threads';
import { CodedError } from '@tessera/contracts';
import { workerThreadEntry } from './background-thread.js';

/** A background thread ended without being asked to: its pending requests fail with this (a 500), and it is not restarted. */
export class ThreadExited extends CodedError {
  readonly code = 'ERR_THREAD_EXITED';
}

/** What a background thread sends that answers no request: its state, a line for the log. */
export type ThreadNotice<Reply> = Exclude<Reply, { readonly id: number }>;

export interface BackgroundWorker<Request, Reply> {
  /**
   * Sends `request` (given its id) and waits for the reply with that id; rejects with `overdue()`
   * past `waitMs`, or with the thread's failure. The process is kept alive only while one is pending.
   */
  ask(request: (id: number) => Request, waitMs: number, overdue: () => Error): Promise<Reply>;
  /** Asks the thread to close with `request`, waits for it to exit, and stops it after 10 s. */
  close(request: (id: number) => Request): Promise<void>;
}

/**
 * A background thread (its bootstrap lowers it first, see workerThreadEntry) and the requests the
 * process makes of it by message: each reply carries the id of its request; every other message is
 * a notice. When the thread fails or exits unasked, `onFailure` is told once and every pending
 * request is rejected; after close() neither happens.
 */
export function startBackgroundWorker<Request, Reply extends object>(options: {
  /** For the failure when it exits unasked: "the <name> thread exited (code)". */
  readonly name: string;
  readonly besideUrl: string;
  readonly entry: string;
  readonly workerData: unknown;
  readonly onNotice: (notice: ThreadNotice<Reply>) => void;
  readonly onFailure: (error: Error) => void;
}): BackgroundWorker<Request, Reply> {
  const entry = workerThreadEntry(options.besideUrl, options.entry);
  const worker = new Worker(entry.url, { workerData: options.workerData, execArgv: entry.execArgv });
  worker.unref();
  let nextId = 0;
  const pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: unknown) => void }>();
  let closing: Promise<void> | undefined;
  let exited = false;
  let failed = false;

  const isReply = (message: Reply): message is Extract<Reply, { readonly id: number }> => 'id' in message && typeof message.id === 'number';
  worker.on('message', (message: Reply) => {
    if (!isReply(message)) {
      // Cast: a message without an id is, by the protocol's type, a notice.
      options.onNotice(message as ThreadNotice<Reply>);
      return;
    }
    pending.get(message.id)?.resolve(message);
    pending.delete(message.id);
  });
  const fail = (error: Error) => {
    if (closing || failed) return;
    failed = true;
    options.onFailure(error);
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  };
  worker.on('error', fail);
  worker.once('exit', (code) => {
    exited = true;
    fail(new ThreadExited(`the ${options.name} thread exited (${code})`));
  });

  return {
    ask: (request, waitMs, overdue) => {
      const id = (nextId += 1);
      worker.ref();
      return new Promise<Reply>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(overdue());
        }, waitMs);
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
        worker.postMessage(request(id));
      }).finally(() => {
        if (pending.size === 0) worker.unref();
      });
    },
    close: (request) => {
      closing ??= (async () => {
        if (exited) return;
        worker.ref();
        const closed = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.postMessage(request((nextId += 1)));
        // The thread finishes what it holds and closes; if it does not within 10 s, it is stopped.
        const timer = setTimeout(() => void worker.terminate(), 10_000);
        await closed;
        clearTimeout(timer);
      })();
      return closing;
    },
  };
}
