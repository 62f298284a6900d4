import { z } from 'zod';
import { isPublishedEventType, PublishedEvent, type RecordedEvent } from '@tessera/contracts';
import { FeedMessageInvalid, feedKey, type FeedEvent } from './revocation-feed.js';

/**
 * The message value on the wire, for consumers in any language (docs/kafka.md). bigints
 * travel as decimal strings: JSON numbers lose precision past 2^53 in most parsers.
 */
const decimal = z.string().regex(/^(0|[1-9]\d*)$/);
const envelope = {
  eventId: z.string().min(1).max(128),
  position: decimal,
  stream: z.string().min(1).max(256),
  revision: decimal,
  recordedAt: z.number().int().nonnegative(),
  requestId: z.string().max(128).optional(),
};
export const FeedMessageValue = z.object({ ...envelope, event: PublishedEvent });
export type FeedMessageValue = z.infer<typeof FeedMessageValue>;
/** The same message with its event read only as far as its type, to decide whether this version knows it. */
const FeedMessageEnvelope = z.object({ ...envelope, event: z.looseObject({ type: z.string().min(1).max(128) }) });

/**
 * A message decoded: a published event this version knows, or one it does not (a newer Tessera's
 * event, or one added to a topic later), which a consumer skips. Never an error: a new event type
 * on a topic must not stop a consumer.
 */
export type DecodedFeedMessage =
  | { readonly known: true; readonly feedEvent: FeedEvent }
  | { readonly known: false; readonly type: string; readonly eventId: string; readonly position: bigint; readonly recordedAt: number };

export interface EncodedFeedMessage {
  readonly key: string;
  readonly value: string;
  /** The Kafka message timestamp: when the store recorded the event, so seeking by time means log time. */
  readonly timestamp: number;
  readonly headers: { readonly type: string };
}

/** Audit metadata other than the request id (source address, actor) stays in the log. */
export function encodeFeedMessage(recorded: RecordedEvent): EncodedFeedMessage {
  const value: FeedMessageValue = {
    eventId: recorded.eventId,
    position: recorded.position.toString(),
    stream: recorded.stream,
    revision: recorded.revision.toString(),
    recordedAt: recorded.recordedAt,
    ...(recorded.metadata.requestId === undefined ? {} : { requestId: recorded.metadata.requestId }),
    event: recorded.event,
  };
  return {
    key: feedKey(recorded.event),
    value: JSON.stringify(value),
    timestamp: recorded.recordedAt,
    headers: { type: recorded.event.type },
  };
}

/**
 * Reads a message value. A value that is not a Tessera feed message, or a known event type in a
 * shape this version does not accept, throws FeedMessageInvalid (reported, then skipped); an event
 * type this version does not know decodes as `known: false`.
 */
export function decodeFeedMessage(value: string | Buffer | null): DecodedFeedMessage {
  if (value === null) throw new FeedMessageInvalid('message has no value');
  let json: unknown;
  try {
    json = JSON.parse(value.toString());
  } catch (error) {
    throw new FeedMessageInvalid('message value is not JSON', { cause: error });
  }
  const envelope = FeedMessageEnvelope.safeParse(json);
  if (!envelope.success) throw new FeedMessageInvalid(`message value is not a feed event: ${envelope.error.message}`);
  const { eventId, position, stream, revision, recordedAt, requestId } = envelope.data;
  const type = envelope.data.event.type;
  if (!isPublishedEventType(type)) return { known: false, type, eventId, position: BigInt(position), recordedAt };
  const event = PublishedEvent.safeParse(envelope.data.event);
  if (!event.success) throw new FeedMessageInvalid(`message value is not a feed event: ${event.error.message}`);
  return {
    known: true,
    feedEvent: {
      eventId,
      position: BigInt(position),
      stream,
      revision: BigInt(revision),
      recordedAt,
      ...(requestId === undefined ? {} : { requestId }),
      event: event.data,
    },
  };
}
