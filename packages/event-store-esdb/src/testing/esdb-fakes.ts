import { PassThrough, Readable } from 'node:stream';
import { BACKWARDS, END, START, type AllStreamResolvedEvent, type AllStreamSubscription, type Direction, type ReadPosition } from '@eventstore/db-client';
import type { TesseraEvent } from '@tessera/events';

/**
 * Doubles of the EventStoreDB client's data and streams, for unit tests without a server.
 * They copy the client's shapes (an $all record, a subscription stream with 'caughtUp' events
 * and unsubscribe()); what a real server does is for the contract suite to check.
 */

let nextId = 0;

/** A record of $all: one of our events, or with `system` one of ESDB's own ($statistics-collected…). */
export function allRecord(position: bigint, options: { system?: boolean; type?: string; stream?: string; createdMs?: number; revision?: bigint } = {}): AllStreamResolvedEvent {
  nextId += 1;
  const accountId = `acc-${nextId}`;
  const type = options.system ? '$statistics-collected' : (options.type ?? 'AccountRegistered');
  const data: TesseraEvent = { type: 'AccountRegistered', v: 1, accountId, name: 'n', permissions: [], at: 1 };
  return {
    event: {
      streamId: options.system ? '$stats-127.0.0.1:2113' : (options.stream ?? `account-${accountId}`),
      id: `00000000-0000-4000-8000-${String(nextId).padStart(12, '0')}`,
      isJson: true,
      revision: options.revision ?? 0n,
      type,
      created: new Date(options.createdMs ?? 1_700_000_000_000 + Number(position)),
      data: type === 'AccountRegistered' ? data : { ...data, type },
      metadata: {},
      position: { commit: position, prepare: position },
    },
    commitPosition: position,
  } as unknown as AllStreamResolvedEvent; // only the fields the adapter reads are filled in
}

export interface PageRequest {
  readonly direction: Direction;
  readonly fromPosition: ReadPosition;
  readonly maxCount: number;
}

/**
 * $all as a sorted list, read the way the server reads it: forwards from a position includes
 * the record there; backwards from a position excludes it unless `backwardsInclusive`.
 */
export function readLog(log: readonly AllStreamResolvedEvent[], request: PageRequest, backwardsInclusive = false): AllStreamResolvedEvent[] {
  const at = (record: AllStreamResolvedEvent) => record.event!.position.commit;
  const { direction, fromPosition, maxCount } = request;
  if (direction === BACKWARDS) {
    const from = fromPosition === END ? undefined : fromPosition === START ? -1n : fromPosition.commit;
    const below = log.filter((record) => from === undefined || at(record) < from || (backwardsInclusive && at(record) === from));
    return below.reverse().slice(0, maxCount);
  }
  const from = fromPosition === START ? -1n : fromPosition === END ? Infinity : fromPosition.commit;
  return log.filter((record) => typeof from === 'bigint' && at(record) >= from).slice(0, maxCount);
}

/** A subscription stream as the client returns it; the test pushes records and emits 'caughtUp' as the server would. */
export function fakeSubscription(): AllStreamSubscription & { unsubscribed: number } {
  const stream = new PassThrough({ objectMode: true }) as PassThrough & { unsubscribe: () => Promise<void>; unsubscribed: number };
  stream.unsubscribed = 0;
  stream.unsubscribe = async () => {
    stream.unsubscribed += 1;
  };
  return stream as unknown as AllStreamSubscription & { unsubscribed: number }; // a PassThrough has every member the adapter uses
}

/** A finished read of the given records, shaped like the client's StreamingRead. */
export function streamingRead(records: readonly AllStreamResolvedEvent[]): Readable & { cancel: () => Promise<void> } {
  return Object.assign(Readable.from(records), { cancel: async () => undefined });
}
