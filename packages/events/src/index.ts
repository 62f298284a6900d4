/**
 * Tessera's own view of its log: the public contract (`@tessera/contracts`, re-exported whole so
 * a service imports events from one place) and the internal events beside it. Private: nothing
 * published may depend on it (the layering rule published-needs-only-published).
 */
export * from '@tessera/contracts';
export * from './internal-events.js';
export * from './shared-signals-events.js';
export * from './tessera-event.js';
// Named, so that it shadows the contracts' RecordedEvent (whose event defaults to the published ones).
export type { RecordedEvent } from './tessera-event.js';
export * from './streams.js';
