export { SqliteEventStore, type CommitStats, type SqliteEventStoreOptions } from './sqlite-event-store.js';
export { SqliteLogRetention } from './sqlite-log-retention.js';
