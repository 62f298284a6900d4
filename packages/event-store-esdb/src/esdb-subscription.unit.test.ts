import { describe, expect, it, vi } from 'vitest';
import { UnavailableError, type AllStreamSubscription } from '@eventstore/db-client';
import type { RecordedEvent } from '@tessera/events';
import { EventStoreUnavailable, type SubscribeOptions } from '@tessera/event-store';
import { createEsdbSubscription } from './esdb-subscription.js';
import { allRecord, fakeSubscription } from './testing/esdb-fakes.js';

// The server's side is a stream double the test pushes records into, emits 'caughtUp' on, or
// breaks, as the client's own stream does; what a real server sends is for the contract suite.

function subscribe(options: Partial<SubscribeOptions> & { newestMatch?: () => Promise<bigint | undefined> } = {}) {
  const { newestMatch, ...subscribeOptions } = options;
  const stream = fakeSubscription();
  const delivered: RecordedEvent[] = [];
  const errors: unknown[] = [];
  const learned: bigint[] = [];
  const subscription = createEsdbSubscription({
    options: {
      onEvent: (recorded) => void delivered.push(recorded),
      onError: (error) => void errors.push(error),
      ...subscribeOptions,
    },
    open: () => stream,
    // By default a server that sends CaughtUp: the fallback does not start within a test.
    newestMatch: newestMatch ?? (() => Promise.reject(new Error('the fallback was not expected to run'))),
    fallbackAfterMs: newestMatch ? 0 : 60_000,
    learn: (position) => void learned.push(position),
  });
  return { stream, subscription, delivered, errors, learned };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const settledState = (promise: Promise<unknown>) =>
  Promise.race([promise.then(() => 'resolved', () => 'rejected'), tick().then(() => 'pending')]);

describe('an EventStoreDB subscription', () => {
  it('delivers in order, and lastPosition is the last event handled, including ones skipped client-side', async () => {
    const { stream, subscription, delivered, learned } = subscribe({ after: 5n });
    stream.push(allRecord(5n)); // at `after` itself: not delivered
    stream.push(allRecord(10n));
    stream.push(allRecord(20n, { system: true }));
    await expect.poll(() => subscription.lastPosition()).toBe(20n);
    expect(delivered.map((e) => e.position)).toEqual([10n]);
    expect(learned).toEqual([10n]);
    await subscription.close();
  });

  it('counts an event in lastPosition only once onEvent has finished with it', async () => {
    let release!: () => void;
    const { stream, subscription } = subscribe({
      onEvent: (recorded) => (recorded.position === 20n ? new Promise<void>((resolve) => (release = resolve)) : undefined),
    });
    stream.push(allRecord(10n));
    stream.push(allRecord(20n));
    await expect.poll(() => release).toBeTypeOf('function');
    expect(subscription.lastPosition()).toBe(10n);
    release();
    await expect.poll(() => subscription.lastPosition()).toBe(20n);
    await subscription.close();
  });

  it('resolves caughtUp at the server\'s CaughtUp, after the events sent before it were handled', async () => {
    let release!: () => void;
    const { stream, subscription } = subscribe({
      onEvent: (recorded) => (recorded.position === 10n ? new Promise<void>((resolve) => (release = resolve)) : undefined),
    });
    stream.push(allRecord(10n));
    stream.emit('caughtUp');
    await expect.poll(() => release).toBeTypeOf('function');
    expect(await settledState(subscription.caughtUp)).toBe('pending');
    release();
    await subscription.caughtUp;
    await subscription.close();
  });

  it('without CaughtUp (servers before 23.10), is caught up once the newest matching event at start was handled', async () => {
    const { stream, subscription } = subscribe({ newestMatch: async () => 20n });
    stream.push(allRecord(10n));
    await tick();
    expect(await settledState(subscription.caughtUp)).toBe('pending');
    stream.push(allRecord(20n));
    await subscription.caughtUp;
    await subscription.close();
  });

  it('does not look for the end of the log itself when the server says CaughtUp in time', async () => {
    // The fallback's wait on a clock the test moves: well past it, the fallback would have asked.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let asked = 0;
      const stream = fakeSubscription();
      const subscription = createEsdbSubscription({
        options: { onEvent: () => undefined },
        open: () => stream,
        newestMatch: async () => (asked += 1, undefined),
        fallbackAfterMs: 20,
        learn: () => undefined,
      });
      stream.emit('caughtUp');
      await subscription.caughtUp;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(asked).toBe(0);
      await subscription.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('without CaughtUp, is caught up at once when nothing matches', async () => {
    const { subscription } = subscribe({ newestMatch: async () => undefined });
    await subscription.caughtUp;
    await subscription.close();
  });

  it('fails, rather than wait for ever, when it cannot learn where the log ends before catching up', async () => {
    const { stream, subscription, errors } = subscribe({ newestMatch: async () => Promise.reject(new UnavailableError()) });
    await expect(subscription.caughtUp).rejects.toBeInstanceOf(EventStoreUnavailable);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(EventStoreUnavailable);
    expect(stream.unsubscribed).toBe(1);
    await subscription.close();
  });

  it.each([
    ['the connection drops (UNAVAILABLE)', new UnavailableError()],
    ['the HTTP/2 stream is reset (INTERNAL)', Object.assign(new Error('13 INTERNAL: Received RST_STREAM with code 2'), { code: 13 })],
    ['the server cancels the call', Object.assign(new Error('1 CANCELLED: Call cancelled'), { code: 1, type: 'cancelled' })],
  ])('ends with onError(EventStoreUnavailable) when %s, lastPosition at the last event handled', async (_why, cause) => {
    const { stream, subscription, errors } = subscribe();
    stream.push(allRecord(10n));
    await expect.poll(() => subscription.lastPosition()).toBe(10n);
    stream.destroy(cause);
    await expect.poll(() => errors.length).toBe(1);
    expect(errors[0]).toBeInstanceOf(EventStoreUnavailable);
    expect((errors[0] as EventStoreUnavailable).cause).toBe(cause);
    expect(subscription.lastPosition()).toBe(10n);
    await expect(subscription.caughtUp).rejects.toBe(errors[0]);
    await subscription.close();
  });

  it('ends with onError(EventStoreUnavailable) when the server ends the call without an error', async () => {
    const { stream, subscription, errors } = subscribe();
    stream.emit('caughtUp');
    await subscription.caughtUp;
    stream.push(null);
    await expect.poll(() => errors.length).toBe(1);
    expect(errors[0]).toBeInstanceOf(EventStoreUnavailable);
    await subscription.close();
  });

  it('passes an error of onEvent to onError unchanged, stops, and does not count that event', async () => {
    const boom = Object.assign(new Error('reader bug'), { code: 14 }); // shaped like a gRPC error: still the reader's
    const { stream, subscription, errors, delivered } = subscribe({
      onEvent: (recorded) => {
        if (recorded.position === 20n) throw boom;
        delivered.push(recorded);
      },
    });
    stream.push(allRecord(10n));
    stream.push(allRecord(20n));
    stream.push(allRecord(30n));
    await expect.poll(() => errors.length).toBe(1);
    expect(errors[0]).toBe(boom);
    await expect(subscription.caughtUp).rejects.toBe(boom);
    expect(delivered.map((e) => e.position)).toEqual([10n]);
    expect(subscription.lastPosition()).toBe(10n);
    expect(stream.destroyed).toBe(true);
    expect(stream.unsubscribed).toBe(1);
  });

  it('closes: delivery stops, the call is cancelled, a second close is harmless, and no error is reported', async () => {
    const { stream, subscription, errors, delivered } = subscribe();
    stream.push(allRecord(10n));
    await expect.poll(() => delivered.length).toBe(1);
    await subscription.close();
    await subscription.close();
    expect(stream.destroyed).toBe(true);
    expect(stream.unsubscribed).toBe(1);
    // A late status from the cancelled call is not reported as a failure.
    stream.emit('error', new UnavailableError());
    await tick();
    expect(errors).toEqual([]);
    expect(delivered).toHaveLength(1);
  });

  it('ignores a CaughtUp that arrives after it was closed', async () => {
    const { stream, subscription } = subscribe();
    await subscription.close();
    expect(() => stream.emit('caughtUp')).not.toThrow();
    expect((stream as AllStreamSubscription).readableLength).toBe(0);
  });
});
