import { isRecordedOf, type EventOfType, type RecordedEvent, type TesseraEventType } from '@tessera/events';
import type { SubscribeOptions, Subscription } from './event-store.js';

/** A read model fed from the global log: the event types it wants and how it folds one in. */
export interface LogReader {
  readonly types: readonly TesseraEventType[];
  apply(recorded: RecordedEvent): void;
}

/**
 * A read model over the event types it lists, with a handler typed by that list: the handler
 * sees exactly the events it asked for, so a list and a handler that disagree fail to compile.
 */
export function logReader<const Types extends readonly TesseraEventType[]>(
  types: Types,
  apply: (recorded: RecordedEvent<EventOfType<Types[number]>>) => void,
): LogReader {
  return {
    types,
    apply: (recorded) => {
      // followLog hands a reader only the types it listed; the check keeps that promise for any caller.
      if (isRecordedOf(types, recorded)) apply(recorded);
    },
  };
}

/**
 * One subscription per process feeding every read model, so they all advance together and
 * "caught up" means all of them are.
 */
export function followLog<S extends Subscription>(
  store: { subscribeToAll(options: SubscribeOptions): S },
  readers: readonly LogReader[],
  onError: (error: unknown) => void,
  options: { after?: bigint | undefined } = {},
): S {
  const routes = new Map<TesseraEventType, LogReader[]>();
  for (const reader of readers) {
    for (const type of reader.types) routes.set(type, [...(routes.get(type) ?? []), reader]);
  }
  return store.subscribeToAll({
    ...(options.after === undefined ? {} : { after: options.after }),
    types: [...routes.keys()],
    onEvent: (recorded) => {
      for (const reader of routes.get(recorded.event.type) ?? []) reader.apply(recorded);
    },
    onError,
  });
}
