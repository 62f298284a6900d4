export * from './event-store.js';
export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite-event-store.js';
export { followLog, type LogReader } from './follow-log.js';
export { EsdbEventStore, type EsdbEventStoreOptions } from './esdb-event-store.js';
export { guardAvailability, type Availability, type AvailabilityOptions, type GuardedEventStore, type ResilientSubscription } from './store-availability.js';
