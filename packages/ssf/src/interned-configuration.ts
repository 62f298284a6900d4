import type { SsfStreamConfiguration } from '@tessera/events';
import { eventsByDefault, eventsSupported } from './event-types.js';

/** Every event type Tessera knows, as the one string each stream's configuration refers to. */
const knownEventTypes = new Map<string, string>(eventsSupported.map((type) => [type, type]));

/**
 * The lists most streams configure, shared by every stream that has them. Never changed in place:
 * a configuration is replaced whole on each change (fat events).
 */
const sharedLists: readonly string[][] = [[...eventsByDefault], [...eventsSupported]];

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((type, index) => type === b[index]);

function internedList(list: readonly string[]): string[] {
  const interned = list.map((type) => knownEventTypes.get(type) ?? type);
  return sharedLists.find((shared) => sameList(shared, interned)) ?? interned;
}

/**
 * A stream's configuration as read from the log, its event-type URIs and lists shared with every
 * other stream's: each read of an event parses new copies of the same long URIs, and a deployment
 * holds two folds of every stream (about 1.3 KB a stream before).
 */
export function internedConfiguration(configuration: SsfStreamConfiguration): SsfStreamConfiguration {
  return { ...configuration, eventsRequested: internedList(configuration.eventsRequested), eventsDelivered: internedList(configuration.eventsDelivered) };
}
