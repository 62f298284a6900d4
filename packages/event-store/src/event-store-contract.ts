import { randomUUID } from 'node:crypto';
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import type { RecordedEvent, TesseraEvent } from '@tessera/events';
import { EventStoreUnavailable, ExpectedRevisionConflict, type EventStore } from './event-store.js';
import { systemClock } from '@tessera/timing';

export interface EventStoreFixture {
  readonly store: EventStore;
  /** Another handle on the same log, which the suite closes itself. */
  readonly openAnother: () => Promise<EventStore>;
  readonly teardown: () => Promise<void>;
}

const registered = (accountId: string, name = 'contract'): TesseraEvent => ({
  type: 'AccountRegistered',
  v: 1,
  accountId,
  name,
  permissions: ['transaction:charge'],
  at: 1_700_000_000,
});
const permissionsChanged = (accountId: string, permissions: string[]): TesseraEvent => ({
  type: 'PermissionsChanged',
  v: 1,
  accountId,
  permissions,
  at: 1_700_000_001,
});

/**
 * The behaviour every EventStore adapter must have. Streams are unique per test, so the
 * suite also runs against a shared server that holds other data.
 */
export function eventStoreContract(name: string, createFixture: () => Promise<EventStoreFixture>): void {
  describe(`EventStore contract: ${name}`, () => {
    let fixture: EventStoreFixture;
    let store: EventStore;
    beforeAll(async () => {
      fixture = await createFixture();
      store = fixture.store;
    });
    afterAll(async () => {
      await fixture?.teardown();
    });
    const newStream = () => {
      const accountId = randomUUID();
      return { accountId, stream: `account-${accountId}` };
    };
    /**
     * The sentinel for "nothing more was delivered": a new subscription from `after` receives `stream`'s
     * event at `revision`, so the store has handed that event to subscribers, and a subscription that
     * should not have it can be checked at once instead of after a sleep.
     */
    const deliveredToAWitness = async (after: bigint, stream: string, revision: bigint) => {
      let seen = false;
      const witness = store.subscribeToAll({
        after,
        onEvent: (recorded) => {
          if (recorded.stream === stream && recorded.revision === revision) seen = true;
        },
        onError: () => undefined,
      });
      try {
        await expect.poll(() => seen, { timeout: 5000 }).toBe(true);
      } finally {
        await witness.close();
      }
    };

    it('appends to a new stream with no_stream and numbers revisions from 0', async () => {
      const { accountId, stream } = newStream();
      const result = await store.append(stream, [{ event: registered(accountId) }], { expectedRevision: 'no_stream' });
      expect(result.nextExpectedRevision).toBe(0n);
      expect(result.position).toBeGreaterThan(0n);
      const second = await store.append(stream, [{ event: permissionsChanged(accountId, ['a']) }, { event: permissionsChanged(accountId, ['b']) }], {
        expectedRevision: 0n,
      });
      expect(second.nextExpectedRevision).toBe(2n);
      expect(second.position).toBeGreaterThan(result.position);
    });

    it('names an event its caller named no id for with a time-ordered UUID (version 7): an id made in a later millisecond sorts after', async () => {
      const { accountId, stream } = newStream();
      const before = Date.now();
      await store.append(stream, [{ event: registered(accountId) }, { event: permissionsChanged(accountId, ['a']) }], { expectedRevision: 'no_stream' });
      await store.append(stream, [{ event: permissionsChanged(accountId, ['b']) }], { expectedRevision: 1n });
      const after = Date.now();
      const ids = (await store.readStream(stream)).map(({ eventId }) => eventId);
      expect(ids).toHaveLength(3);
      for (const id of ids) {
        expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        // The first 48 bits are the milliseconds when the id was made.
        const madeAt = Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);
        expect(madeAt).toBeGreaterThanOrEqual(before);
        expect(madeAt).toBeLessThanOrEqual(after);
      }
      const madeAt = ids.map((id) => id.slice(0, 13));
      expect([...madeAt].sort()).toEqual(madeAt);
      expect(new Set(ids).size).toBe(3);
    });

    it('refuses no_stream when the stream exists', async () => {
      const { accountId, stream } = newStream();
      await store.append(stream, [{ event: registered(accountId) }], { expectedRevision: 'no_stream' });
      await expect(store.append(stream, [{ event: registered(accountId) }], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(
        ExpectedRevisionConflict,
      );
    });

    it('refuses a stale expected revision and writes nothing', async () => {
      const { accountId, stream } = newStream();
      await store.append(stream, [{ event: registered(accountId) }], { expectedRevision: 'no_stream' });
      await store.append(stream, [{ event: permissionsChanged(accountId, ['x']) }], { expectedRevision: 0n });
      const error = await store
        .append(stream, [{ event: permissionsChanged(accountId, ['y']) }], { expectedRevision: 0n })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ExpectedRevisionConflict);
      // Cast: the line above checked it (toBeInstanceOf does not narrow).
      expect((error as ExpectedRevisionConflict).code).toBe('ERR_EXPECTED_REVISION_CONFLICT');
      const events = await store.readStream(stream);
      expect(events.map((e) => e.revision)).toEqual([0n, 1n]);
    });

    it('refuses an expected revision on a stream that does not exist', async () => {
      const { accountId, stream } = newStream();
      await expect(store.append(stream, [{ event: registered(accountId) }], { expectedRevision: 0n })).rejects.toBeInstanceOf(
        ExpectedRevisionConflict,
      );
      expect(await store.readStream(stream)).toEqual([]);
    });

    it('accepts any expected revision with "any"', async () => {
      const { accountId, stream } = newStream();
      await store.append(stream, [{ event: registered(accountId) }], { expectedRevision: 'any' });
      const result = await store.append(stream, [{ event: permissionsChanged(accountId, []) }], { expectedRevision: 'any' });
      expect(result.nextExpectedRevision).toBe(1n);
    });

    it('lets exactly one of many concurrent appends at the same revision win', async () => {
      const { accountId, stream } = newStream();
      await store.append(stream, [{ event: registered(accountId) }], { expectedRevision: 'no_stream' });
      const outcomes = await Promise.allSettled(
        Array.from({ length: 16 }, (_, i) =>
          store.append(stream, [{ event: permissionsChanged(accountId, [`p${i}`]) }], { expectedRevision: 0n }),
        ),
      );
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(15);
      for (const o of lost) expect(o.reason).toBeInstanceOf(ExpectedRevisionConflict);
      expect(await store.readStream(stream)).toHaveLength(2);
    });

    it('reads a stream forwards, backwards and the last event alone', async () => {
      const { accountId, stream } = newStream();
      await store.append(
        stream,
        [{ event: registered(accountId) }, { event: permissionsChanged(accountId, ['1']) }, { event: permissionsChanged(accountId, ['2']) }],
        { expectedRevision: 'no_stream' },
      );
      const forwards = await store.readStream(stream);
      expect(forwards.map((e) => e.revision)).toEqual([0n, 1n, 2n]);
      expect(forwards[0]?.event).toEqual(registered(accountId));
      const backwards = await store.readStream(stream, { direction: 'backwards' });
      expect(backwards.map((e) => e.revision)).toEqual([2n, 1n, 0n]);
      const last = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
      expect(last).toHaveLength(1);
      expect(last[0]?.event).toEqual(permissionsChanged(accountId, ['2']));
      expect(last[0]?.stream).toBe(stream);
    });

    it('reads a stream from a revision on, either way, inclusive', async () => {
      const { accountId, stream } = newStream();
      await store.append(stream, [{ event: registered(accountId) }, ...['1', '2', '3', '4'].map((p) => ({ event: permissionsChanged(accountId, [p]) }))], { expectedRevision: 'no_stream' });
      expect((await store.readStream(stream, { fromRevision: 2n })).map((e) => e.revision)).toEqual([2n, 3n, 4n]);
      expect((await store.readStream(stream, { fromRevision: 1n, maxCount: 2 })).map((e) => e.revision)).toEqual([1n, 2n]);
      expect((await store.readStream(stream, { direction: 'backwards', fromRevision: 3n, maxCount: 2 })).map((e) => e.revision)).toEqual([3n, 2n]);
      expect((await store.readStream(stream, { direction: 'backwards', fromRevision: 1n })).map((e) => e.revision)).toEqual([1n, 0n]);
      expect(await store.readStream(stream, { fromRevision: 9n })).toEqual([]);
    });

    it('reads an absent stream as empty', async () => {
      expect(await store.readStream(`account-${randomUUID()}`)).toEqual([]);
    });

    it('keeps metadata and the event id', async () => {
      const { accountId, stream } = newStream();
      const eventId = randomUUID();
      await store.append(stream, [{ event: registered(accountId), eventId, metadata: { requestId: 'req-1', accountId, sourceAddress: '127.0.0.1' } }], {
        expectedRevision: 'no_stream',
      });
      const [recorded] = await store.readStream(stream);
      expect(recorded?.eventId).toBe(eventId);
      expect(recorded?.metadata).toEqual({ requestId: 'req-1', accountId, sourceAddress: '127.0.0.1' });
      expect(recorded?.recordedAt).toBeGreaterThan(0);
    });

    it('reads the global log after a position, in order, with a type filter', async () => {
      const before = (await store.headPosition()) ?? 0n;
      const a = newStream();
      const b = newStream();
      await store.append(a.stream, [{ event: registered(a.accountId) }], { expectedRevision: 'no_stream' });
      await store.append(b.stream, [{ event: registered(b.accountId) }], { expectedRevision: 'no_stream' });
      await store.append(a.stream, [{ event: permissionsChanged(a.accountId, ['z']) }], { expectedRevision: 0n });
      const all = (await store.readAll({ after: before })).filter((e) => [a.stream, b.stream].includes(e.stream));
      expect(all.map((e) => e.event.type)).toEqual(['AccountRegistered', 'AccountRegistered', 'PermissionsChanged']);
      const positions = all.map((e) => e.position);
      expect([...positions].sort((x, y) => (x < y ? -1 : 1))).toEqual(positions);
      const filtered = (await store.readAll({ after: before, types: ['PermissionsChanged'] })).filter((e) => e.stream === a.stream);
      expect(filtered).toHaveLength(1);
      const afterFirst = (await store.readAll({ after: all[0]!.position })).filter((e) => [a.stream, b.stream].includes(e.stream));
      expect(afterFirst).toHaveLength(2);
      expect(await store.headPosition()).toBeGreaterThanOrEqual(all[2]!.position);
    });

    it('subscribes from a position (exclusive), catches up, then receives live events in order', async () => {
      const a = newStream();
      const first = await store.append(a.stream, [{ event: registered(a.accountId) }], { expectedRevision: 'no_stream' });
      await store.append(a.stream, [{ event: permissionsChanged(a.accountId, ['old']) }], { expectedRevision: 0n });
      const received: RecordedEvent[] = [];
      const subscription = store.subscribeToAll({
        after: first.position,
        types: ['AccountRegistered', 'PermissionsChanged'],
        onEvent: (recorded) => {
          if (recorded.stream === a.stream) received.push(recorded);
        },
      });
      await subscription.caughtUp;
      expect(received.map((e) => e.revision)).toEqual([1n]);
      await store.append(a.stream, [{ event: permissionsChanged(a.accountId, ['live']) }], { expectedRevision: 1n });
      await expect.poll(() => received.length, { timeout: 5000 }).toBe(2);
      expect(received[1]?.event).toEqual(permissionsChanged(a.accountId, ['live']));
      await subscription.close();
    });

    it('does not deliver events of types outside the filter', async () => {
      const a = newStream();
      const start = (await store.headPosition()) ?? 0n;
      const received: RecordedEvent[] = [];
      const subscription = store.subscribeToAll({
        after: start,
        types: ['PermissionsChanged'],
        onEvent: (recorded) => {
          if (recorded.stream === a.stream) received.push(recorded);
        },
      });
      await store.append(a.stream, [{ event: registered(a.accountId) }, { event: permissionsChanged(a.accountId, ['only']) }], {
        expectedRevision: 'no_stream',
      });
      await expect.poll(() => received.length, { timeout: 5000 }).toBe(1);
      expect(received[0]?.event.type).toBe('PermissionsChanged');
      await subscription.close();
    });

    it('tells the last event a subscription handled, once onEvent finished with it, so resuming after it loses and repeats nothing', async () => {
      const start = (await store.headPosition()) ?? 0n;
      const a = newStream();
      let release: (() => void) | undefined;
      const subscription = store.subscribeToAll({
        after: start,
        types: ['PermissionsChanged'],
        onEvent: (recorded) => {
          if (recorded.stream === a.stream && recorded.revision === 2n) return new Promise<void>((resolve) => (release = resolve));
        },
      });
      expect(subscription.lastPosition()).toBe(start);
      await store.append(a.stream, [{ event: registered(a.accountId) }, { event: permissionsChanged(a.accountId, ['1']) }, { event: permissionsChanged(a.accountId, ['2']) }], {
        expectedRevision: 'no_stream',
      });
      const [, one, two] = await store.readStream(a.stream);
      await expect.poll(() => release, { timeout: 5000 }).toBeDefined();
      expect(subscription.lastPosition()).toBe(one!.position);
      release!();
      await expect.poll(() => subscription.lastPosition(), { timeout: 5000 }).toBe(two!.position);
      await subscription.close();

      await store.append(a.stream, [{ event: permissionsChanged(a.accountId, ['3']) }], { expectedRevision: 2n });
      const resumed: RecordedEvent[] = [];
      const again = store.subscribeToAll({
        after: subscription.lastPosition(),
        types: ['PermissionsChanged'],
        onEvent: (recorded) => {
          if (recorded.stream === a.stream) resumed.push(recorded);
        },
      });
      await again.caughtUp;
      expect(resumed.map((e) => e.revision)).toEqual([3n]);
      await again.close();
    });

    it.each(['throws', 'rejects'])('ends a subscription whose onEvent %s: onError gets that very error and nothing more is delivered', async (how) => {
      const start = (await store.headPosition()) ?? 0n;
      const a = newStream();
      const failure = new Error(`onEvent ${how}`);
      const delivered: RecordedEvent[] = [];
      const errors: unknown[] = [];
      const subscription = store.subscribeToAll({
        after: start,
        onEvent: (recorded) => {
          if (recorded.stream !== a.stream) return;
          delivered.push(recorded);
          if (recorded.revision !== 1n) return;
          if (how === 'throws') throw failure;
          return Promise.reject(failure);
        },
        onError: (error) => errors.push(error),
      });
      await subscription.caughtUp;
      await store.append(a.stream, [{ event: registered(a.accountId) }, { event: permissionsChanged(a.accountId, ['x']) }], { expectedRevision: 'no_stream' });
      await expect.poll(() => errors.length, { timeout: 5000 }).toBe(1);
      expect(errors[0]).toBe(failure);
      // The event that failed is not counted: a subscription resumed after lastPosition() gets it again.
      const [first, failed] = await store.readStream(a.stream);
      expect(subscription.lastPosition()).toBeGreaterThanOrEqual(first!.position);
      expect(subscription.lastPosition()).toBeLessThan(failed!.position);
      await store.append(a.stream, [{ event: permissionsChanged(a.accountId, ['y']) }], { expectedRevision: 1n });
      // A witness subscription has seen that event: it has reached every subscriber it was going to.
      await deliveredToAWitness(start, a.stream, 2n);
      expect(delivered.map((e) => e.revision)).toEqual([0n, 1n]);
      await subscription.close();
      expect(errors).toHaveLength(1);
    });

    it('rejects caughtUp with the error of an onEvent that fails before the subscription caught up', async () => {
      const start = (await store.headPosition()) ?? 0n;
      const a = newStream();
      await store.append(a.stream, [{ event: registered(a.accountId) }], { expectedRevision: 'no_stream' });
      const failure = new Error('onEvent failed while catching up');
      const errors: unknown[] = [];
      const subscription = store.subscribeToAll({
        after: start,
        onEvent: (recorded) => {
          if (recorded.stream === a.stream) throw failure;
        },
        onError: (error) => errors.push(error),
      });
      await expect(subscription.caughtUp).rejects.toBe(failure);
      expect(errors).toEqual([failure]);
      await subscription.close();
    });

    it('closes a subscription: close resolves, delivery stops, a second close is harmless, no error is reported', async () => {
      const start = (await store.headPosition()) ?? 0n;
      const a = newStream();
      const delivered: RecordedEvent[] = [];
      const errors: unknown[] = [];
      const subscription = store.subscribeToAll({
        after: start,
        onEvent: (recorded) => {
          if (recorded.stream === a.stream) delivered.push(recorded);
        },
        onError: (error) => errors.push(error),
      });
      await store.append(a.stream, [{ event: registered(a.accountId) }], { expectedRevision: 'no_stream' });
      await expect.poll(() => delivered.length, { timeout: 5000 }).toBe(1);
      await subscription.close();
      await store.append(a.stream, [{ event: permissionsChanged(a.accountId, ['after close']) }], { expectedRevision: 0n });
      await deliveredToAWitness(start, a.stream, 1n);
      expect(delivered).toHaveLength(1);
      await subscription.close();
      expect(errors).toEqual([]);
    });

    it('refuses every call once closed with EventStoreUnavailable, subscribing included; closing twice is harmless', async () => {
      const closed = await fixture.openAnother();
      await closed.close();
      await closed.close();
      const { accountId, stream } = newStream();
      await expect(closed.append(stream, [{ event: registered(accountId) }], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(EventStoreUnavailable);
      await expect(closed.readStream(stream)).rejects.toBeInstanceOf(EventStoreUnavailable);
      await expect(closed.readAll()).rejects.toBeInstanceOf(EventStoreUnavailable);
      await expect(closed.headPosition()).rejects.toBeInstanceOf(EventStoreUnavailable);
      await expect(closed.positionBefore(systemClock.now())).rejects.toBeInstanceOf(EventStoreUnavailable);
      expect(() => closed.subscribeToAll({ onEvent: () => undefined })).toThrow(EventStoreUnavailable);
      expect(await store.readStream(stream)).toEqual([]);
    });

    it('pages a filter of several types in log order without losing or repeating an event', async () => {
      const start = (await store.headPosition()) ?? 0n;
      const a = newStream();
      // Interleave three types; the filter takes two of them.
      const events: TesseraEvent[] = [registered(a.accountId)];
      for (let i = 0; i < 7; i += 1) events.push(permissionsChanged(a.accountId, [`p${i}`]));
      await store.append(a.stream, events.map((event) => ({ event })), { expectedRevision: 'no_stream' });
      for (let i = 0; i < 5; i += 1) {
        const b = newStream();
        await store.append(b.stream, [{ event: registered(b.accountId) }], { expectedRevision: 'no_stream' });
        await store.append(a.stream, [{ event: permissionsChanged(a.accountId, [`q${i}`]) }], { expectedRevision: BigInt(7 + i) });
      }
      const expected = (await store.readAll({ after: start, maxCount: 1000 })).filter((e) => e.event.type !== 'ApiCredentialIssued');
      const paged: RecordedEvent[] = [];
      let after = start;
      for (let pages = 0; pages < 100; pages += 1) {
        const page = await store.readAll({ after, types: ['AccountRegistered', 'PermissionsChanged'], maxCount: 3 });
        paged.push(...page);
        if (page.length < 3) break;
        after = page[page.length - 1]!.position;
      }
      expect(paged.map((e) => e.position)).toEqual(expected.map((e) => e.position));
    });

    it('finds the position before a time, so recent history can be read alone', async () => {
      const a = newStream();
      const earlier = await store.append(a.stream, [{ event: registered(a.accountId) }], { expectedRevision: 'no_stream' });
      await new Promise((r) => setTimeout(r, 20));
      const cut = systemClock.now();
      await new Promise((r) => setTimeout(r, 20));
      const later = await store.append(a.stream, [{ event: permissionsChanged(a.accountId, ['after']) }], { expectedRevision: 0n });
      const before = await store.positionBefore(cut);
      expect(before).toBeDefined();
      expect(before!).toBeGreaterThanOrEqual(earlier.position);
      expect(before!).toBeLessThan(later.position);
      const recent = (await store.readAll({ after: before })).filter((e) => e.stream === a.stream);
      expect(recent.map((e) => e.revision)).toEqual([1n]);
      expect(await store.positionBefore(systemClock.now() + 60_000)).toBeGreaterThanOrEqual(later.position);
    });

    // docs/decisions/0007: a retried append is recognised by its event ids, as EventStoreDB does.
    describe('an append retried with the same event ids', () => {
      const appendTwice = async () => {
        const { accountId, stream } = newStream();
        const ids = [randomUUID(), randomUUID(), randomUUID()];
        const first = await store.append(stream, [{ event: registered(accountId), eventId: ids[0] }], { expectedRevision: 'no_stream' });
        const pair = [
          { event: permissionsChanged(accountId, ['1']), eventId: ids[1] },
          { event: permissionsChanged(accountId, ['2']), eventId: ids[2] },
        ];
        const second = await store.append(stream, pair, { expectedRevision: 0n });
        return { accountId, stream, ids, first, pair, second };
      };

      it('at the same expected revision succeeds with the original revision and position, writing nothing', async () => {
        const { accountId, stream, ids, first, pair, second } = await appendTwice();
        expect(await store.append(stream, pair, { expectedRevision: 0n })).toEqual(second);
        // The stream has moved on since the first append: the answer is still that append's.
        expect(await store.append(stream, [{ event: registered(accountId), eventId: ids[0] }], { expectedRevision: 'no_stream' })).toEqual(first);
        const events = await store.readStream(stream);
        expect(events.map((e) => e.eventId)).toEqual(ids);
        expect(events[2]?.position).toBe(second.position);
      });

      it('with "any" succeeds with the original revision and position, writing nothing', async () => {
        const { stream, ids, pair, second } = await appendTwice();
        expect(await store.append(stream, pair, { expectedRevision: 'any' })).toEqual(second);
        expect((await store.readStream(stream)).map((e) => e.eventId)).toEqual(ids);
      });

      it('is a conflict when only some of the ids are already there, and writes nothing', async () => {
        const { accountId, stream, ids, pair } = await appendTwice();
        const mixed = [pair[0]!, { event: permissionsChanged(accountId, ['new']), eventId: randomUUID() }];
        const error = await store.append(stream, mixed, { expectedRevision: 0n }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ExpectedRevisionConflict);
        // Cast: the line above checked it (toBeInstanceOf does not narrow).
        expect((error as ExpectedRevisionConflict).actual).toBe(2n);
        expect((await store.readStream(stream)).map((e) => e.eventId)).toEqual(ids);
      });

      it('is a conflict at an expected revision where other events stand, and writes nothing', async () => {
        const { stream, ids, pair } = await appendTwice();
        // The ids are in the stream, but at revisions 1 and 2, not after revision 1.
        const error = await store.append(stream, pair, { expectedRevision: 1n }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ExpectedRevisionConflict);
        // Cast: the line above checked it (toBeInstanceOf does not narrow).
        expect((error as ExpectedRevisionConflict).actual).toBe(2n);
        expect((await store.readStream(stream)).map((e) => e.eventId)).toEqual(ids);
      });
    });

    it('refuses an invalid event payload and writes nothing', async () => {
      const { accountId, stream } = newStream();
      // Cast: deliberately invalid (an empty name, a negative time), for the store to refuse.
      const bogus = { type: 'AccountRegistered', v: 1, accountId, name: '', permissions: [], at: -1 } as unknown as TesseraEvent;
      await expect(store.append(stream, [{ event: bogus }], { expectedRevision: 'no_stream' })).rejects.toThrow();
      expect(await store.readStream(stream)).toEqual([]);
    });
  });
}
