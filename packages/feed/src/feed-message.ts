import { z } from 'zod';
import { TesseraEvent, type RecordedEvent } from '@tessera/contracts';
import { FeedMessageInvalid, feedKey, type FeedEvent } from './revocation-feed.js';

/**
 * The message value on the wire, for consumers in any language (docs/kafka.md). bigints
 * travel as decimal strings: JSON numbers lose precision past 2^53 in most parsers.
 */
const decimal = z.string().regex(/^(0|[1-9]\d*)$/);
export const FeedMessageValue = z.object({
  eventId: z.string().min(1).max(128),
  position: decimal,
  stream: z.string().min(1).max(256),
  revision: decimal,
  recordedAt: z.number().int().nonnegative(),
  requestId: z.string().max(128).optional(),
  event: TesseraEvent,
});
export type FeedMessageValue = z.infer<typeof FeedMessageValue>;

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

export function decodeFeedMessage(value: string | Buffer | null): FeedEvent {
  if (value === null) throw new FeedMessageInvalid('message has no value');
  let json: unknown;
  try {
    json = JSON.parse(value.toString());
  } catch (error) {
    throw new FeedMessageInvalid('message value is not JSON', { cause: error });
  }
  const parsed = FeedMessageValue.safeParse(json);
  if (!parsed.success) throw new FeedMessageInvalid(`message value is not a feed event: ${parsed.error.message}`);
  const { eventId, position, stream, revision, recordedAt, requestId, event } = parsed.data;
  return {
    eventId,
    position: BigInt(position),
    stream,
    revision: BigInt(revision),
    recordedAt,
    ...(requestId === undefined ? {} : { requestId }),
    event,
  };
}
