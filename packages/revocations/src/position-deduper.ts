import type { Delivery, FeedEvent } from '@tessera/feed';

/**
 * Drops redeliveries. The relay publishes the log in position order and retries a failed batch
 * whole, so within one partition a new event always has a higher position than every event
 * before it; a position at or below the highest seen in its partition was delivered already.
 * That holds for republishing after a relay crash and for several relays at once, and costs one
 * number per partition instead of a set of event ids.
 */
export function createPositionDeduper() {
  const highest = new Map<number, bigint>();
  return {
    /** True the first time an event is seen; false for a redelivery. */
    firstDelivery(event: FeedEvent, delivery: Delivery): boolean {
      const seen = highest.get(delivery.partition);
      if (seen !== undefined && event.position <= seen) return false;
      highest.set(delivery.partition, event.position);
      return true;
    },
  };
}
