import type { Host } from '@tessera/host';

/** How long a write waits for this process's read models to apply it before going on anyway (it is durable). */
const appliedWaitMs = 2_000;

/**
 * Until the process's read models have read `position`, or two seconds have passed: what the admin
 * API appended holds in this process before it answers, and the wait is bounded as every answer is.
 */
export async function untilApplied(host: Pick<Host, 'clock' | 'readModels'>, position: bigint): Promise<void> {
  const deadline = host.clock.now() + appliedWaitMs;
  while ((host.readModels.lastPosition() ?? -1n) < position && host.clock.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
