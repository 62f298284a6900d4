import { v7 } from 'uuid';

/**
 * The id an appended event gets when its caller names none: a UUID of version 7 (RFC 9562),
 * whose first 48 bits are the time in milliseconds, then a counter and random bits. Ids made one
 * after another sort one after another, so the log's unique index on event ids grows at its end,
 * in pages already in memory, instead of at a random page of an index that grows with history.
 * With random (version 4) ids that page is rarely cached once the log is large, and each commit
 * writes one more page per event (docs/decisions/0019).
 */
export const newEventId = (): string => v7();
