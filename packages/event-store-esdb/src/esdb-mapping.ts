import {
  ANY,
  NO_STREAM,
  START,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type CurrentRevision,
  type JSONEventData,
  type Position,
  type ReadPosition,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { InvalidArgument, InvariantBroken, TesseraEvent, isOneOf, type EventMetadata, type RecordedEvent, type TesseraEventType } from '@tessera/events';
import { EventStoreUnavailable, InvalidEvent, ExpectedRevisionConflict, type ExpectedRevision, type NewEvent } from '@tessera/event-store';

/**
 * Pure translation between the EventStore port and @eventstore/db-client. Nothing here
 * talks to a server, so every rule below is unit-tested without one.
 */

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Validates like the SQLite adapter does, so both refuse the same payloads before anything
 * reaches the log. ESDB insists on UUID event ids; failing here names the cause instead of
 * surfacing a gRPC invalid-argument error.
 */
export function toEventData(newEvent: NewEvent, newId: () => string): JSONEventData {
  const { event, metadata, eventId } = newEvent;
  const checked = TesseraEvent.safeParse(event);
  if (!checked.success) throw new InvalidEvent(`invalid ${String(event.type)} event: ${checked.error.message}`);
  const id = eventId ?? newId();
  if (!uuidPattern.test(id)) throw new InvalidArgument(`event id must be a UUID for EventStoreDB, got ${JSON.stringify(id)}`);
  return {
    id,
    contentType: 'application/json',
    type: event.type,
    // The caller's object, not the parsed copy: zod strips unknown keys, and round-tripping
    // exactly what was appended is what the SQLite adapter does too.
    data: event as unknown as Record<string, unknown>,
    metadata: { ...(metadata ?? {}) },
  };
}

export function toEsdbExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'any') return ANY;
  if (expected < 0n) throw new InvalidArgument(`expected revision must be ≥ 0, got ${expected}`);
  return expected;
}

export function fromEsdbRevision(revision: CurrentRevision | AppendExpectedRevision): bigint | 'no_stream' {
  return typeof revision === 'bigint' ? revision : 'no_stream';
}

/**
 * ESDB writes one log record per event (implicit transactions since v20), so an event's
 * commit position is its own and strictly increasing: that alone is our `position`. The
 * prepare half is equal for such events, which lets a bigint round-trip to a Position.
 */
export function toEsdbPosition(position: bigint): Position {
  return { commit: position, prepare: position };
}

/**
 * readAll's fromPosition is inclusive and subscribeToAll's exclusive; callers filter with
 * `isAfter` in both cases, so the port's exclusive `after` holds whatever the server does.
 * 0 is below every user event, so "after 0" is simply the start.
 */
export function toReadPosition(after: bigint | undefined): ReadPosition {
  return after === undefined || after <= 0n ? START : toEsdbPosition(after);
}

export function isAfter(position: bigint, after: bigint | undefined): boolean {
  return after === undefined || position > after;
}

/** System events ($-prefixed types, e.g. $statistics, $metadata) are ESDB's own, never ours. */
export function isSystemEvent(type: string, streamId: string): boolean {
  return type.startsWith('$') || streamId.startsWith('$');
}

/** Server-side filters match by regex; anchoring makes a type match exactly, not by prefix. */
export function eventTypeRegex(types: readonly TesseraEventType[]): string {
  const escaped = [...new Set(types)].map((type) => type.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return `^(?:${escaped.join('|')})$`;
}

type AnyResolved = ResolvedEvent | AllStreamResolvedEvent;

/**
 * Undefined for what the port never shows: link events, system events, non-JSON data,
 * events outside `types`. A JSON event that is not a Tessera event is reported, not skipped:
 * someone wrote into our log behind our back.
 */
export function fromResolvedEvent(resolved: AnyResolved, types?: readonly TesseraEventType[]): RecordedEvent | undefined {
  const recorded = resolved.event;
  if (!recorded || resolved.link) return undefined;
  if (isSystemEvent(recorded.type, recorded.streamId)) return undefined;
  if (types && types.length > 0 && !isOneOf(types, recorded.type)) return undefined;
  if (!recorded.isJson) return undefined;
  const position = recorded.position?.commit ?? resolved.commitPosition;
  if (position === undefined) {
    throw new InvariantBroken(`event ${recorded.id} in ${recorded.streamId} came without a log position (EventStoreDB older than 22.6?)`);
  }
  return {
    eventId: recorded.id,
    stream: recorded.streamId,
    revision: recorded.revision,
    position,
    // Written only through append(), which validated the payload.
    event: recorded.data as unknown as TesseraEvent,
    metadata: toMetadata(recorded.metadata),
    recordedAt: recorded.created.getTime(),
  };
}

function toMetadata(metadata: unknown): EventMetadata {
  if (metadata === undefined || metadata === null || typeof metadata !== 'object' || Array.isArray(metadata) || metadata instanceof Uint8Array) {
    return {};
  }
  // Cast: the log is written only through append(), which takes an EventMetadata.
  return metadata as EventMetadata;
}

/** gRPC status codes that mean "try again later" rather than "you asked for something wrong". */
const grpcUnavailable = new Set([
  4, // DEADLINE_EXCEEDED
  8, // RESOURCE_EXHAUSTED
  14, // UNAVAILABLE
]);
const esdbUnavailableTypes = new Set(['unavailable', 'deadline-exceeded', 'timeout', 'not-leader']);

/**
 * Driver errors → the port's errors. The client's error classes carry a string `type`, and
 * connection failures before a call starts are bare Errors with a gRPC `code`; both are
 * matched by shape so a second copy of the client in node_modules cannot defeat `instanceof`.
 */
export function translateEsdbError(error: unknown, context: { stream?: string; expected?: ExpectedRevision; operation: string }): unknown {
  if (error instanceof ExpectedRevisionConflict || error instanceof EventStoreUnavailable) return error;
  if (typeof error !== 'object' || error === null) return error;
  const { type, code, message } = driverErrorFields(error);
  if (type === 'wrong-expected-version' && context.stream !== undefined && context.expected !== undefined) {
    // The driver's CurrentRevision: a bigint, or its marker for a stream that does not exist.
    const actual = 'actualVersion' in error ? error.actualVersion : undefined;
    return new ExpectedRevisionConflict(context.stream, context.expected, typeof actual === 'bigint' ? actual : 'no_stream');
  }
  const unavailable =
    (typeof type === 'string' && esdbUnavailableTypes.has(type)) ||
    (typeof code === 'number' && grpcUnavailable.has(code)) ||
    (typeof message === 'string' && /Failed to discover|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(message));
  if (unavailable) {
    return new EventStoreUnavailable(`EventStoreDB unavailable during ${context.operation}: ${String(message)}`, { cause: error });
  }
  return error;
}

/**
 * gRPC codes that end a long-lived call when the connection is lost rather than because the
 * request was wrong: CANCELLED by the server (it is shutting down), UNKNOWN, and INTERNAL, which
 * grpc-js reports for a reset HTTP/2 stream ("Received RST_STREAM …").
 */
const grpcCallLost = new Set([
  1, // CANCELLED (the client's own cancel is filtered out by the client before it gets here)
  2, // UNKNOWN
  13, // INTERNAL
]);

/**
 * Why a subscription ended → the port's error. Everything translateEsdbError calls unavailable
 * is, and so is every way a long-lived call dies with its connection or its server: a
 * subscription is resumable from its last position, so those are outages to retry, not bugs.
 * An access or argument error passes through: retrying it would not help.
 */
export function translateSubscriptionError(error: unknown): unknown {
  const translated = translateEsdbError(error, { operation: 'subscribe to $all' });
  if (translated instanceof EventStoreUnavailable || typeof error !== 'object' || error === null) return translated;
  const { type, code, message } = driverErrorFields(error);
  const lost =
    type === 'cancelled' ||
    (typeof code === 'number' && grpcCallLost.has(code)) ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    code === 'ECONNRESET';
  return lost ? new EventStoreUnavailable(`EventStoreDB ended the subscription: ${String(message)}`, { cause: error }) : translated;
}

export function isStreamNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'type' in error && error.type === 'stream-not-found';
}

/** What a driver error is matched by, read by shape (see translateEsdbError); undefined where it has none. */
function driverErrorFields(error: object): { readonly type: unknown; readonly code: unknown; readonly message: unknown } {
  return {
    type: 'type' in error ? error.type : undefined,
    code: 'code' in error ? error.code : undefined,
    message: 'message' in error ? error.message : undefined,
  };
}
