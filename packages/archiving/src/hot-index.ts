import type { ArchivedAccess, ArchivedEvent } from '@tessera/archive';

/**
 * What the archiver needs of the audit index, and nothing more: the position it reflects (nothing
 * past it is archived), its rows for the events about to be archived (the archive keeps the index's
 * rows, not the log's payloads), and the removal of those rows once the events left the hot log.
 * Declared here, so that archiving depends on no read model: the audit index is one that fits.
 */
export interface HotIndex {
  /** The position of the last event the index reflects; undefined while it reflects none. */
  position(): bigint | undefined;
  /** The index's rows at these positions (none for a position it does not hold). */
  rowsAt(positions: readonly bigint[]): ReadonlyMap<bigint, HotIndexRow>;
  /** Removes these positions' rows and the grants they made; repeatable, so a removal redone after a crash changes nothing. */
  forget(positions: readonly bigint[], grantIds: readonly string[]): void;
}

/**
 * An index row as the archive keeps it (the position, stream and revision come from the log). Its
 * access event may also be a cut, a kind the index keeps for access-at and the archive never holds:
 * cuts live on account streams, which stay in the hot log.
 */
export type HotIndexRow = Omit<ArchivedEvent, 'position' | 'stream' | 'revision' | 'access'> & {
  readonly access: ArchivedAccess | { readonly kind: 'tokens-cut' } | undefined;
};
