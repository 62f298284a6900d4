import type { EventStore } from '@tessera/event-store';

/**
 * The oldest position the log still holds. A stream's checkpoint never holds retention back: a
 * stream that falls behind it is paused with the gap in its status, and resumes from here.
 */
export interface RetentionHorizon {
  oldestRetained(): Promise<bigint | undefined>;
}

/** Today nothing is removed from the log: the oldest retained event is its first. */
export function firstEventHorizon(store: Pick<EventStore, 'readAll'>): RetentionHorizon {
  return {
    oldestRetained: async () => (await store.readAll({ maxCount: 1 }))[0]?.position,
  };
}
