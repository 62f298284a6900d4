import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The lowest CPU priority Linux gives a thread (nice 19): it runs when the others leave the core. */
export const backgroundNice = 19;

/**
 * Lowers the calling thread's CPU priority to nice 19, on Linux (where a thread has an id of its
 * own that setpriority(2) takes, found through /proc/thread-self). Where the audit thread shares a
 * core with the thread that answers token requests (a container with one CPU, a pinned process),
 * the scheduler then gives that core to token requests first, and audit work takes what is left.
 * Returns the thread id it lowered, or undefined where that is not possible (not Linux): the
 * thread then runs at the process's priority, as any thread would.
 */
export function runInBackground(): number | undefined {
  let threadId: number;
  try {
    threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(threadId) || threadId <= 0) return undefined;
  setPriority(threadId, backgroundNice);
  return threadId;
}
