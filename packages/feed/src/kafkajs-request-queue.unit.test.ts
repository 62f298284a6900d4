import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { mendKafkaRequestQueue } from './kafkajs-request-queue.js';

interface RequestQueue {
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  pending: unknown[];
  maxInFlightRequests: number;
  checkPendingRequests(): void;
  destroy(): void;
}

const require = createRequire(import.meta.url);
// kafkajs's CommonJS request queue class, typed by the fields the test reads.
const RequestQueueClass = require('kafkajs/src/network/requestQueue/index.js') as new (options: Record<string, unknown>) => RequestQueue;
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const queues: RequestQueue[] = [];
const queue = () => {
  const made = new RequestQueueClass({ maxInFlightRequests: 1, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'localhost:9092', logger: quiet });
  queues.push(made);
  return made;
};
afterEach(() => {
  for (const made of queues.splice(0)) {
    if (made.throttleCheckTimeoutId) clearTimeout(made.throttleCheckTimeoutId);
    made.destroy();
  }
});

describe("kafkajs's request queue, mended", () => {
  mendKafkaRequestQueue();

  it('schedules no look at its pending requests when none waits and no throttle runs: no timer at all, where kafkajs 2.2.4 set one of minus the epoch (1 ms) after every answer, for ever', () => {
    const idle = queue();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      // What kafkajs does after every answer from the broker.
      idle.checkPendingRequests();
      expect(idle.throttleCheckTimeoutId).toBeNull();
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((warning) => warning.name)).not.toContain('TimeoutNegativeWarning');
  });

  it('still looks again at the end of a throttle, and 10 ms later while requests wait for a slot', () => {
    const throttled = queue();
    throttled.throttledUntil = Date.now() + 60_000;
    throttled.checkPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();

    const waiting = queue();
    // A request that waits for a slot: checkPendingRequests cannot send it (the queue is throttled a moment).
    waiting.pending.push({ correlationId: 1 });
    waiting.throttledUntil = Date.now() - 1;
    waiting.maxInFlightRequests = 0;
    waiting.checkPendingRequests();
    expect(waiting.throttleCheckTimeoutId).not.toBeNull();
  });
});
