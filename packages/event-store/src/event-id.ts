import { timeOrderedUuid } from '@tessera/contracts';

/**
 * The id an appended event gets when its caller names none: a time-ordered UUID (version 7), so
 * the log's unique index on event ids grows at its end instead of at a random page of an index
 * that grows with history. With random (version 4) ids that page is rarely cached once the log
 * is large, and each commit writes one more page per event (docs/decisions/0019).
 */
export const newEventId = (): string => timeOrderedUuid();
