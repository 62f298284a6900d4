export * from './event-store.js';
export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite-event-store.js';
export { followLog, type LogReader } from './follow-log.js';
export { EsdbEventStore, type EsdbEventStoreOptions } from './esdb-event-store.js';
