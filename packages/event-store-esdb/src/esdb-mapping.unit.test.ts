import { describe, expect, it } from 'vitest';
import {
  ANY,
  NO_STREAM,
  START,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type ResolvedEvent,
} from '@eventstore/db-client';
import type { TesseraEvent } from '@tessera/events';
import { EventStoreUnavailable, InvalidEvent, ExpectedRevisionConflict } from '@tessera/event-store';
import { InvalidArgument } from '@tessera/events';
import {
  eventTypeRegex,
  fromEsdbRevision,
  fromResolvedEvent,
  isAfter,
  isStreamNotFound,
  isSystemEvent,
  toEsdbExpectedRevision,
  toEsdbPosition,
  toEventData,
  toReadPosition,
  translateEsdbError,
  translateSubscriptionError,
} from './esdb-mapping.js';

// Only the client's own data shapes and error classes are used here: these tests pin our
// translation rules, they say nothing about how a server behaves (the .int test does that).

const accountId = 'acc-1';
const registered: TesseraEvent = { type: 'AccountRegistered', v: 1, accountId, name: 'n', permissions: ['transaction:charge'], at: 1_700_000_000 };
const eventId = '5b7c2a4e-8f1d-4c3b-9a6e-0d2f1e3c4b5a';
const fixedId = () => eventId;

function resolvedFromAll(overrides: Partial<{ type: string; streamId: string; isJson: boolean; data: unknown; metadata: unknown; position: bigint }> = {}) {
  const position = overrides.position ?? 4242n;
  return {
    event: {
      streamId: overrides.streamId ?? `account-${accountId}`,
      id: eventId,
      isJson: overrides.isJson ?? true,
      revision: 3n,
      type: overrides.type ?? 'AccountRegistered',
      created: new Date(1_700_000_000_123),
      data: overrides.data ?? registered,
      metadata: 'metadata' in overrides ? overrides.metadata : { requestId: 'r-1' },
      position: { commit: position, prepare: position },
    },
    commitPosition: position,
  } as unknown as AllStreamResolvedEvent;
}

describe('event → ESDB event data', () => {
  it('keeps the event as JSON data, its type, metadata and the caller-chosen id', () => {
    const data = toEventData({ event: registered, eventId, metadata: { requestId: 'r-1', sourceAddress: '10.0.0.1' } }, () => 'unused');
    expect(data).toEqual({
      id: eventId,
      contentType: 'application/json',
      type: 'AccountRegistered',
      data: registered,
      metadata: { requestId: 'r-1', sourceAddress: '10.0.0.1' },
    });
  });

  it('generates an id when none is given and writes empty metadata as {}', () => {
    const data = toEventData({ event: registered }, fixedId);
    expect(data.id).toBe(eventId);
    expect(data.metadata).toEqual({});
  });

  it('refuses an invalid payload before anything is sent', () => {
    const bogus = { ...registered, name: '', at: -1 } as TesseraEvent;
    expect(() => toEventData({ event: bogus }, fixedId)).toThrow(InvalidEvent);
  });

  it('refuses an event id that ESDB would reject', () => {
    expect(() => toEventData({ event: registered, eventId: 'req-42' }, fixedId)).toThrow(/UUID/);
  });
});

describe('ESDB resolved event → recorded event', () => {
  it('maps stream, revision, commit position, payload, metadata, id and created time', () => {
    expect(fromResolvedEvent(resolvedFromAll())).toEqual({
      eventId,
      stream: `account-${accountId}`,
      revision: 3n,
      position: 4242n,
      event: registered,
      metadata: { requestId: 'r-1' },
      recordedAt: 1_700_000_000_123,
    });
  });

  it('keeps positions beyond 2^53 exact', () => {
    const big = 2n ** 60n + 7n;
    expect(fromResolvedEvent(resolvedFromAll({ position: big }))?.position).toBe(big);
  });

  it('reads absent or binary metadata as {}', () => {
    expect(fromResolvedEvent(resolvedFromAll({ metadata: undefined }))?.metadata).toEqual({});
    expect(fromResolvedEvent(resolvedFromAll({ metadata: new Uint8Array([1, 2]) }))?.metadata).toEqual({});
  });

  it('hides system events, link events, binary events and types outside the filter', () => {
    expect(fromResolvedEvent(resolvedFromAll({ type: '$statistics-collected', streamId: '$stats-127.0.0.1:2113' }))).toBeUndefined();
    expect(fromResolvedEvent(resolvedFromAll({ type: '$metadata' }))).toBeUndefined();
    expect(fromResolvedEvent(resolvedFromAll({ isJson: false }))).toBeUndefined();
    const link = { ...resolvedFromAll(), link: resolvedFromAll({ type: '$>' }).event } as unknown as AllStreamResolvedEvent;
    expect(fromResolvedEvent(link)).toBeUndefined();
    expect(fromResolvedEvent(resolvedFromAll(), ['PermissionsChanged'])).toBeUndefined();
    expect(fromResolvedEvent(resolvedFromAll(), ['PermissionsChanged', 'AccountRegistered'])).toBeDefined();
    expect(fromResolvedEvent(resolvedFromAll(), [])).toBeDefined();
  });

  it('uses the resolved commit position when a stream read lacks the event position', () => {
    const resolved = resolvedFromAll();
    const withoutPosition = { event: { ...resolved.event, position: undefined }, commitPosition: 99n } as unknown as ResolvedEvent;
    expect(fromResolvedEvent(withoutPosition)?.position).toBe(99n);
    const neither = { event: { ...resolved.event, position: undefined } } as unknown as ResolvedEvent;
    expect(() => fromResolvedEvent(neither)).toThrow(/without a log position/);
  });
});

describe('revisions and positions', () => {
  it('maps expected revisions to the client constants', () => {
    expect(toEsdbExpectedRevision('no_stream')).toBe(NO_STREAM);
    expect(toEsdbExpectedRevision('any')).toBe(ANY);
    expect(toEsdbExpectedRevision(0n)).toBe(0n);
    expect(toEsdbExpectedRevision(2n ** 62n)).toBe(2n ** 62n);
    expect(() => toEsdbExpectedRevision(-1n)).toThrow(InvalidArgument);
  });

  it('maps current revisions back', () => {
    expect(fromEsdbRevision(NO_STREAM)).toBe('no_stream');
    expect(fromEsdbRevision(7n)).toBe(7n);
  });

  it('turns an exclusive `after` into a read position, with 0 and absent meaning the start', () => {
    expect(toReadPosition(undefined)).toBe(START);
    expect(toReadPosition(0n)).toBe(START);
    expect(toReadPosition(1234n)).toEqual({ commit: 1234n, prepare: 1234n });
    expect(toEsdbPosition(5n)).toEqual({ commit: 5n, prepare: 5n });
  });

  it('drops the event at `after` itself, since readAll includes it', () => {
    expect(isAfter(10n, 10n)).toBe(false);
    expect(isAfter(11n, 10n)).toBe(true);
    expect(isAfter(0n, undefined)).toBe(true);
  });

  it('tells system events by type or stream', () => {
    expect(isSystemEvent('$>', 'x')).toBe(true);
    expect(isSystemEvent('Foo', '$settings')).toBe(true);
    expect(isSystemEvent('TokenRevoked', 'tokenfamily-1')).toBe(false);
  });

  it('builds an anchored type regex so one type does not match another by prefix', () => {
    const regex = new RegExp(eventTypeRegex(['TokenRotated', 'TokenRevoked', 'TokenRotated']));
    expect(regex.test('TokenRotated')).toBe(true);
    expect(regex.test('TokenRevoked')).toBe(true);
    expect(regex.test('TokenRotatedV2')).toBe(false);
    expect(regex.test('XTokenRevoked')).toBe(false);
    expect(eventTypeRegex(['TokenRotated', 'TokenRevoked'])).toBe('^(?:TokenRotated|TokenRevoked)$');
  });
});

describe('error translation', () => {
  const context = { stream: 'tokenfamily-f1', expected: 4n, operation: 'append' } as const;

  it('turns WrongExpectedVersionError into ExpectedRevisionConflict with the actual revision', () => {
    const error = new WrongExpectedVersionError(undefined, { streamName: 'tokenfamily-f1', expected: 4n, current: 6n });
    const translated = translateEsdbError(error, context);
    expect(translated).toBeInstanceOf(ExpectedRevisionConflict);
    expect(translated).toMatchObject({ code: 'ERR_EXPECTED_REVISION_CONFLICT', stream: 'tokenfamily-f1', expected: 4n, actual: 6n });
  });

  it('reports a missing stream as no_stream', () => {
    const error = new WrongExpectedVersionError(undefined, { streamName: 's', expected: 0n, current: NO_STREAM });
    expect(translateEsdbError(error, { stream: 's', expected: 0n, operation: 'append' })).toMatchObject({ actual: 'no_stream' });
  });

  it('turns unavailability into EventStoreUnavailable, keeping the cause', () => {
    const unavailable = new UnavailableError();
    const translated = translateEsdbError(unavailable, context);
    expect(translated).toBeInstanceOf(EventStoreUnavailable);
    expect((translated as EventStoreUnavailable).cause).toBe(unavailable);
    // What the client throws when it cannot even connect: a bare Error with gRPC status 14.
    const refused = Object.assign(new Error('14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED'), { code: 14 });
    expect(translateEsdbError(refused, context)).toBeInstanceOf(EventStoreUnavailable);
    expect(translateEsdbError(new Error('Failed to discover after 10 attempts.'), context)).toBeInstanceOf(EventStoreUnavailable);
    expect(translateEsdbError({ type: 'not-leader' }, context)).toBeInstanceOf(EventStoreUnavailable);
    expect(translateEsdbError(Object.assign(new Error('deadline'), { code: 4 }), context)).toBeInstanceOf(EventStoreUnavailable);
  });

  it('passes anything else through untouched', () => {
    const other = new TypeError('bad');
    expect(translateEsdbError(other, context)).toBe(other);
    expect(translateEsdbError('string', context)).toBe('string');
    const already = new ExpectedRevisionConflict('s', 0n, 1n);
    expect(translateEsdbError(already, context)).toBe(already);
  });

  it('turns every way a subscription loses its call into EventStoreUnavailable, keeping the cause', () => {
    const cases = [
      new UnavailableError(),
      Object.assign(new Error('13 INTERNAL: Received RST_STREAM with code 2 (Internal server error)'), { code: 13 }),
      Object.assign(new Error('1 CANCELLED: Call cancelled'), { code: 1, type: 'cancelled' }),
      Object.assign(new Error('2 UNKNOWN: Server Error'), { code: 2, type: 'unknown' }),
      Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }),
    ];
    for (const cause of cases) {
      const translated = translateSubscriptionError(cause);
      expect(translated).toBeInstanceOf(EventStoreUnavailable);
      expect((translated as EventStoreUnavailable).cause).toBe(cause);
    }
  });

  it('passes a subscription error that retrying would not cure through untouched', () => {
    const denied = Object.assign(new Error('7 PERMISSION_DENIED'), { code: 7, type: 'access-denied' });
    expect(translateSubscriptionError(denied)).toBe(denied);
    const bug = new TypeError('bad');
    expect(translateSubscriptionError(bug)).toBe(bug);
  });

  it('recognises stream-not-found for reads', () => {
    expect(isStreamNotFound(new StreamNotFoundError(undefined, 'account-x'))).toBe(true);
    expect(isStreamNotFound(new UnavailableError())).toBe(false);
    expect(isStreamNotFound(undefined)).toBe(false);
  });
});
