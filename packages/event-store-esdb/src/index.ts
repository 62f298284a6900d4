export { EsdbEventStore, type EsdbEventStoreOptions } from './esdb-event-store.js';
