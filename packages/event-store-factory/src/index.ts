export { openEventStore } from './event-store-factory.js';
