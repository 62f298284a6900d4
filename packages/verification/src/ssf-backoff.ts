/** Runs `step` until it succeeds, backing off 250 ms doubling to 30 s; gives up only when the receiver closes. */
export async function withRetries<T>(step: () => Promise<T>, signal: AbortSignal, reportError: (error: unknown) => void): Promise<T> {
  let pauseMs = 250;
  for (;;) {
    signal.throwIfAborted();
    try {
      return await step();
    } catch (error) {
      if (signal.aborted) throw error;
      reportError(error);
      await pause(pauseMs, signal);
      pauseMs = Math.min(pauseMs * 2, 30_000);
    }
  }
}

/** Resolves after `ms`, or at once when the signal aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolvePause) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolvePause();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
