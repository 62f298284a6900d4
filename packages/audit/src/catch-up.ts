import type { EventStore } from '@tessera/event-store';
import type { AuditIndex } from './audit-index.js';

/**
 * Brings the index up to the log's head as it is now, by reading pages (`tessera audit`, which
 * has no subscription to keep). A server following the same file meanwhile is harmless: each
 * page is applied only past what the index already reflects.
 */
export async function catchUpIndex(index: AuditIndex, store: Pick<EventStore, 'readAll' | 'headPosition'>, options: { pageSize?: number } = {}): Promise<void> {
  const pageSize = options.pageSize ?? 5000;
  await index.forgetIfAnotherLog(store);
  const head = await store.headPosition();
  let after = index.position();
  const bulk = head !== undefined && index.startBulkLoad();
  try {
    while (head !== undefined && (after === undefined || after < head)) {
      const page = await store.readAll({ ...(after === undefined ? {} : { after }), maxCount: pageSize });
      if (page.length === 0) break;
      const outcome = index.apply(page, after);
      // After a gap the index reflects less than was read: read again from where it is.
      after = outcome.gap ? outcome.position : max(outcome.position, page[page.length - 1]!.position);
    }
  } catch (error) {
    if (bulk) index.abandonBulkLoad();
    throw error;
  }
  if (bulk) index.finishBulkLoad();
}

const max = (a: bigint | undefined, b: bigint): bigint => (a !== undefined && a > b ? a : b);
