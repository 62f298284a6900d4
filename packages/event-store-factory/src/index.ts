export { NoEventStore, openEventStore } from './event-store-factory.js';
