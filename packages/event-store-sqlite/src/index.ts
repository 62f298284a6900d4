export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite-event-store.js';
export type { CommitStats } from '@tessera/event-store';
export { SqliteLogRetention } from './sqlite-log-retention.js';
export { ownerOnlySqliteFile, ownerOnlySqliteSidecars } from './sqlite-file.js';
