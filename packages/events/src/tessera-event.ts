import { z } from 'zod';
import { isPublishedEventType, PublishedEvent, type RecordedEvent as StoredEvent } from '@tessera/contracts';
import {
  AdminTokenIssued,
  AdminTokenRevoked,
  ArchiveHeadRecorded,
  ArchiveKeyTrusted,
  AuthenticationFailuresCounted,
  LegacyTokenIssued,
  RevocationMirrored,
  SecretHashingKeyRecorded,
  SecretHashingKeyRotated,
} from './internal-events.js';
import { sharedSignalsEvents } from './shared-signals-events.js';

/**
 * Every event Tessera writes: the published ones (`PublishedEvent`, the public contract) and the
 * internal ones. The event store, the domain and the projections read this union; the relay
 * publishes only its published members, so an internal event can change without a public release.
 */
export const TesseraEvent = z.discriminatedUnion('type', [
  ...PublishedEvent.options,
  LegacyTokenIssued,
  AuthenticationFailuresCounted,
  AdminTokenIssued,
  AdminTokenRevoked,
  SecretHashingKeyRecorded,
  SecretHashingKeyRotated,
  ArchiveKeyTrusted,
  ArchiveHeadRecorded,
  ...sharedSignalsEvents,
  RevocationMirrored,
]);
export type TesseraEvent = z.infer<typeof TesseraEvent>;
export type TesseraEventType = TesseraEvent['type'];
/** The events whose `type` is one of `Types`. */
export type EventOfType<Types extends TesseraEventType> = Extract<TesseraEvent, { type: Types }>;

/** An event as read back from Tessera's log, internal events included. */
export type RecordedEvent<E extends TesseraEvent = TesseraEvent> = StoredEvent<E>;

/** Narrows an event to one of the types listed: readers of a filtered read need no cast. */
export function isEventOf<const Types extends readonly TesseraEventType[]>(types: Types, event: TesseraEvent): event is EventOfType<Types[number]> {
  return types.some((type) => type === event.type);
}

/** Narrows a recorded event to one of the types listed, as `isEventOf` does for its payload. */
export function isRecordedOf<const Types extends readonly TesseraEventType[]>(types: Types, recorded: RecordedEvent): recorded is RecordedEvent<EventOfType<Types[number]>> {
  return isEventOf(types, recorded.event);
}

/** Whether a recorded event is one Tessera publishes: what the relay may hand to a feed. */
export function isPublishedRecord(recorded: RecordedEvent): recorded is RecordedEvent<PublishedEvent> {
  return isPublishedEventType(recorded.event.type);
}
