import type { EventStore } from '@tessera/event-store';

/**
 * The store with its appends made through `append` (which calls the store's own), and every other
 * call passed straight through: one place that lists what a store forwards, for each wrapper that
 * only adds to appends (timing, tracing).
 */
export function aroundAppend(store: EventStore, append: EventStore['append']): EventStore {
  return {
    append,
    readStream: (stream, options) => store.readStream(stream, options),
    readAll: (options) => store.readAll(options),
    subscribeToAll: (options) => store.subscribeToAll(options),
    headPosition: () => store.headPosition(),
    positionBefore: (epochMs) => store.positionBefore(epochMs),
    probe: () => store.probe(),
    close: () => store.close(),
  };
}
