import { eventStoreContract } from './event-store-contract.js';
import { InMemoryEventStore } from './in-memory-event-store.js';

// Each handle is a log of its own: the contract's second handle is only ever closed, never read.
eventStoreContract('in memory', async () => {
  const store = new InMemoryEventStore();
  return {
    store,
    openAnother: async () => new InMemoryEventStore(),
    teardown: () => store.close(),
  };
});
