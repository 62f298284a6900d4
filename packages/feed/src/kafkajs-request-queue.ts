import { createRequire } from 'node:module';

/**
 * The part of kafkajs 2.2.4's per-connection request queue (src/network/requestQueue) this module
 * touches: its own fields, as its source names them.
 */
interface RequestQueueInternals {
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  pending: unknown[];
  checkPendingRequests(): void;
}

/** kafkajs's own interval for a queue whose requests wait for a free in-flight slot (ms). */
const checkPendingRequestsIntervalMs = 10;

/**
 * kafkajs 2.2.4 schedules its next look at a connection's pending requests after every answer,
 * at `throttledUntil - Date.now()`. Unthrottled, `throttledUntil` is -1, so the delay is minus the
 * epoch: Node clamps it to 1 ms (Node 24 also prints a TimeoutNegativeWarning on stderr, which
 * breaks a fatal start's one line), and the look schedules the next one. So every connection of
 * every Kafka client woke its process every millisecond for as long as it was open, with nothing
 * to do (a known kafkajs bug, unfixed upstream as of 2.2.4).
 *
 * This replaces that one method with the same rule minus the loop: a look is scheduled while
 * requests wait (at the end of a throttle, or after kafkajs's 10 ms), or when a throttle is to
 * end; with nothing pending and no throttle, none. A request that cannot go at once is pushed to
 * `pending` and schedules a look itself, and every answer looks at once, as before.
 */
export function mendKafkaRequestQueue(): void {
  const require = createRequire(import.meta.url);
  // kafkajs has no exports map: its sources are importable by path. A CommonJS class, typed here
  // by the fields above (the package declares none for it).
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueInternals & { scheduleCheckPendingRequests(): void } };
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueInternals): void {
    if (this.throttleCheckTimeoutId) return;
    const throttleLeftMs = this.throttledUntil - Date.now();
    if (this.pending.length === 0 && throttleLeftMs <= 0) return;
    const delayMs = throttleLeftMs > 0 ? throttleLeftMs : checkPendingRequestsIntervalMs;
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, delayMs);
  };
}
