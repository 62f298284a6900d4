import type { RecordedEvent } from '@tessera/events';
import type { EventStore, SubscribeOptions, Subscription } from '../event-store.js';

/**
 * A store whose deliveries to chosen subscriptions a test can hold back, as a follower that lags
 * would: what a process hands its read models directly (read-your-writes) is then the only way
 * they learn of a change, and a test proves the hand-over happened before an answer was sent.
 * Everything else is the wrapped store's.
 */
export interface HeldDeliveries extends EventStore {
  /** From now on, events for the subscriptions `which` picks wait until `release()`. */
  hold(which: (options: SubscribeOptions) => boolean): void;
  release(): void;
}

export function holdingDeliveries(store: EventStore): HeldDeliveries {
  let holding: ((options: SubscribeOptions) => boolean) | undefined;
  let released: Promise<void> = Promise.resolve();
  let release = () => undefined as void;
  return {
    append: (stream, events, options) => store.append(stream, events, options),
    readStream: (stream, options) => store.readStream(stream, options),
    readAll: (options) => store.readAll(options),
    headPosition: () => store.headPosition(),
    positionBefore: (epochMs) => store.positionBefore(epochMs),
    probe: () => store.probe(),
    close: () => store.close(),
    subscribeToAll: (options): Subscription =>
      store.subscribeToAll({
        ...options,
        onEvent: async (recorded: RecordedEvent) => {
          // A held subscription awaits its delivery: the store sends it nothing more until then.
          while (holding?.(options)) await released;
          await options.onEvent(recorded);
        },
      }),
    hold: (which) => {
      holding = which;
      released = new Promise((resolve) => (release = resolve));
    },
    release: () => {
      holding = undefined;
      release();
    },
  };
}
