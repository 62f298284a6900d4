import { systemScheduler, type Scheduler } from '@tessera/timing';

/** Wakes every waiter at once (the event store's Wakeup wakes one): requests and pollers wait side by side. */
export class Broadcast {
  private readonly waiters = new Set<() => void>();

  /** The timeouts run on `scheduler`: a stream's waits move with a test's manual time. */
  constructor(private readonly scheduler: Scheduler = systemScheduler) {}

  /** Waits until woken or `timeoutMs` has passed (never, when undefined: no timer is held), or `signal` aborts. */
  wait(timeoutMs: number | undefined, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        cancel?.();
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const cancel = timeoutMs === undefined ? undefined : this.scheduler.after(Math.max(0, timeoutMs), done);
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
