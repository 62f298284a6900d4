/**
 * A 1 ms timer noting the longest time between its ticks, until stop(): how long a request that
 * arrived at the worst moment would have waited for the event loop. Run beside the work to judge.
 */
export function blockedLoopProbe(): { stop(): number } {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(longest, performance.now() - last);
    },
  };
}
