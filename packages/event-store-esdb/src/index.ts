export { EsdbEventStore, type EsdbEventStoreOptions } from './esdb-event-store.js';
export { EsdbLogRetention, type EsdbRetentionClient } from './esdb-log-retention.js';
