import type { EventStore } from '@tessera/event-store';
import type { IndexMeta } from './index-meta.js';

/**
 * Whether the index was built from another log than `store`'s: the log's first event, or its event
 * at the position the index reflects, is not the one the index saw there. A data folder restored
 * from an older backup (whose log then grew again), or TESSERA_EVENT_STORE pointed elsewhere. An
 * index that reflects nothing yet was built from no log.
 */
export async function builtFromAnotherLog(meta: IndexMeta, store: Pick<EventStore, 'readAll' | 'headPosition'>): Promise<boolean> {
  const position = meta.position();
  if (position === undefined) return false;
  const [first] = await store.readAll({ maxCount: 1 });
  // Strictly after position − 1: the event at the position itself, if the log has one.
  const [last] = await store.readAll({ after: position - 1n, maxCount: 1 });
  const saw = (key: 'first_position' | 'first_event_id' | 'last_event_id') => meta.get(key);
  // Events archived from the head of the log leave a later first event: the event the index saw
  // first is then the archive's, and the event at the index's position is what tells the logs apart.
  const firstArchived = first !== undefined && saw('first_position') !== undefined && first.position > BigInt(saw('first_position')!);
  const firstSame = firstArchived || first?.eventId === saw('first_event_id');
  const lastSame = last?.position === position && last.eventId === saw('last_event_id');
  // The event at the index's position archived too (an idle log loses its newest events to the
  // archive): the log has handed out that position, and no event now sits there. A log restored
  // from an older copy either has not reached the position, or holds another event at it.
  const lastArchived = last?.position !== position && ((await store.headPosition()) ?? 0n) >= position;
  return !(firstSame && (lastSame || lastArchived));
}
