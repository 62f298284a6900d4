import { isRecordedOf, type EventOfType, type RecordedEvent, type TesseraEventType } from '@tessera/events';
import type { EventStore } from './event-store.js';

/**
 * The events of the types listed, from the start of the log (or after `after`), a page at a
 * time and typed by the list: a command that folds part of the log (`accounts list`, the longest
 * token lifetime) needs no cast and holds one page at a time.
 */
export async function* readAllOf<const Types extends readonly TesseraEventType[]>(
  store: Pick<EventStore, 'readAll'>,
  types: Types,
  options: { readonly after?: bigint | undefined; readonly pageSize?: number } = {},
): AsyncGenerator<RecordedEvent<EventOfType<Types[number]>>[]> {
  const pageSize = options.pageSize ?? 1000;
  let after = options.after;
  for (;;) {
    const page = await store.readAll({ ...(after === undefined ? {} : { after }), types, maxCount: pageSize });
    // The store filters by type already; the check keeps the promise the types make for any adapter.
    yield page.filter((recorded) => isRecordedOf(types, recorded));
    if (page.length < pageSize) return;
    after = page[page.length - 1]!.position;
  }
}
