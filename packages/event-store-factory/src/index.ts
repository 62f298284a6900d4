export { NoEventStore, openEventStore, openLogRetention } from './event-store-factory.js';
