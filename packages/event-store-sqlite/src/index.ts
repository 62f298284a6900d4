export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite-event-store.js';
