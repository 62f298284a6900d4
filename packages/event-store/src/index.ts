export * from './event-store.js';
export { InMemoryEventStore, type InMemoryEventStoreOptions } from './in-memory-event-store.js';
export { handleCommand, type CommandHandling, type CommandOutcome, type CommandStore } from './command-handler.js';
export { followLog, logReader, type LogReader } from './follow-log.js';
export { readAllOf } from './read-all-of.js';
export { newEventId } from './event-id.js';
export { guardAvailability, type Availability, type AvailabilityOptions, type GuardedEventStore, type ResilientSubscription } from './store-availability.js';
export { TimeSlices, Wakeup, settledFromOutside, type Settled } from './delivery-signals.js';
export { earliestUsableKeyPublication, revocationRebuildAfter } from './revocation-window.js';
