export * from './event-store.js';
export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite-event-store.js';
export { EsdbEventStore, type EsdbEventStoreOptions } from './esdb-event-store.js';
