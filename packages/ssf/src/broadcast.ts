/** Wakes every waiter at once (the event store's Wakeup wakes one): requests and pollers wait side by side. */
export class Broadcast {
  private readonly waiters = new Set<() => void>();

  /** Waits until woken or `timeoutMs` has passed, or `signal` aborts. */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
