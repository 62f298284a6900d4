/**
 * A stream's minimum interval between two requests of one kind (verification requests; polls that
 * answer nothing): the whole seconds the caller is to wait, its Retry-After, or 0 when `intervalMs`
 * has passed since the last one (or there was none). The verification decider and the poll limiter
 * both ask this, so the two limits count and round alike. Times in ms.
 */
export function secondsToWait(lastAtMs: number | undefined, nowMs: number, intervalMs: number): number {
  if (lastAtMs === undefined) return 0;
  const leftMs = intervalMs - (nowMs - lastAtMs);
  return leftMs <= 0 ? 0 : Math.ceil(leftMs / 1000);
}
