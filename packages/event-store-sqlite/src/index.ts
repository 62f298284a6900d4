export { SqliteEventStore, type CommitStats, type SqliteEventStoreOptions } from './sqlite-event-store.js';
