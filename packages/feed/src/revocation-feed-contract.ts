import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '@tessera/contracts';
import { FeedClosed, type FeedConsumer, type FeedEvent, type RevocationFeed } from './revocation-feed.js';
import { createRecorder, signingKeyPublished, tokenRevoked, tokenRotated } from './sample-events.js';
import { epochSeconds, systemClock } from '@tessera/timing';

export interface RevocationFeedFixture {
  readonly feed: RevocationFeed;
  readonly teardown: () => Promise<void>;
}

const nowSeconds = () => epochSeconds(systemClock);

/**
 * The behaviour every RevocationFeed adapter must have. Families, keys and groups are unique
 * per test, so the tests share one feed (one topic) and ignore each other's events.
 */
export function revocationFeedContract(name: string, createFixture: () => Promise<RevocationFeedFixture>): void {
  describe(`RevocationFeed contract: ${name}`, () => {
    let fixture: RevocationFeedFixture;
    let feed: RevocationFeed;
    const consumers: FeedConsumer[] = [];
    const record = createRecorder(BigInt(systemClock.now()) * 1000n);

    beforeAll(async () => {
      fixture = await createFixture();
      feed = fixture.feed;
    });
    afterAll(async () => {
      await Promise.all(consumers.map((c) => c.close()));
      await fixture?.teardown();
    });

    /** Collects the events of the given families or keys, as delivered. */
    async function collect(ids: ReadonlySet<string>, options: { since?: number; groupId?: string } = {}) {
      const received: FeedEvent[] = [];
      const consumer = await feed.consume({
        groupId: options.groupId ?? `contract-${randomUUID()}`,
        ...(options.since === undefined ? {} : { since: options.since }),
        onEvent: (delivered) => {
          const event = delivered.event;
          const id = 'familyId' in event ? event.familyId : 'kid' in event ? event.kid : 'accountId' in event ? event.accountId : 'controlregion';
          if (ids.has(id)) received.push(delivered);
        },
      });
      consumers.push(consumer);
      return { received, consumer };
    }

    const family = () => `fam-${randomUUID()}`;
    const families = (count: number) => Array.from({ length: count }, family);

    /** Rotations then a revocation per family, interleaved across families the way a busy log is. */
    function history(familyIds: string[], rotations: number): RecordedEvent[] {
      const at = nowSeconds();
      const events: RecordedEvent[] = [];
      for (let generation = 1; generation <= rotations; generation += 1) {
        for (const familyId of familyIds) events.push(record(tokenRotated(familyId, generation, at)));
      }
      for (const familyId of familyIds) events.push(record(tokenRevoked(familyId, rotations, at)));
      return events;
    }

    it("tells a consumer's lag: the events not handed on yet, and since when it is behind; nothing once caught up", async () => {
      const [familyId] = families(1);
      const at = systemClock.now();
      // One family: one partition, in order. Distinct record times, so "behind since" names one.
      const published = [1, 2, 3].map((generation) => record(tokenRotated(familyId!, generation, nowSeconds()), at + generation * 1000));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let reachedSecond = false;
      const consumer = await feed.consume({
        groupId: `contract-lag-${randomUUID()}`,
        since: at,
        onEvent: async (delivered) => {
          if (delivered.eventId !== published[1]!.eventId) return;
          reachedSecond = true;
          await held;
        },
      });
      consumers.push(consumer);
      await feed.publish(published);
      await expect.poll(() => reachedSecond, { timeout: 15_000 }).toBe(true);
      expect(await consumer.lag()).toEqual({ pendingEvents: 2, behindSince: published[0]!.recordedAt });
      release();
      await expect.poll(async () => (await consumer.lag()).pendingEvents, { timeout: 15_000 }).toBe(0);
      expect((await consumer.lag()).behindSince).toBeUndefined();
    });

    it('delivers every published event with its id, position, stream and revision', async () => {
      const familyIds = families(2);
      const kid = `kid-${randomUUID()}`;
      const published = [...history(familyIds, 1), record(signingKeyPublished(kid, nowSeconds()))];
      await feed.publish(published);
      const { received } = await collect(new Set([...familyIds, kid]));
      await expect.poll(() => received.length, { timeout: 15_000 }).toBe(published.length);
      const byId = new Map(received.map((e) => [e.eventId, e]));
      for (const recorded of published) {
        const delivered = byId.get(recorded.eventId);
        expect(delivered).toEqual({
          eventId: recorded.eventId,
          position: recorded.position,
          stream: recorded.stream,
          revision: recorded.revision,
          recordedAt: recorded.recordedAt,
          requestId: recorded.metadata.requestId,
          event: recorded.event,
        });
      }
    });

    it('keeps the order of each family across publishes', async () => {
      const familyIds = families(4);
      const published = history(familyIds, 5);
      // Several publishes of uneven size: order must hold across calls, not only within one.
      for (let i = 0; i < published.length; i += 7) await feed.publish(published.slice(i, i + 7));
      const { received } = await collect(new Set(familyIds));
      await expect.poll(() => received.length, { timeout: 15_000 }).toBe(published.length);
      for (const familyId of familyIds) {
        const positions = received.filter((e) => 'familyId' in e.event && e.event.familyId === familyId).map((e) => e.position);
        const expected = published.filter((e) => 'familyId' in e.event && e.event.familyId === familyId).map((e) => e.position);
        expect(positions).toEqual(expected);
      }
    });

    it('gives every event to each of two groups', async () => {
      const familyIds = families(3);
      const first = await collect(new Set(familyIds));
      const second = await collect(new Set(familyIds));
      await Promise.all([first.consumer.ready, second.consumer.ready]);
      const published = history(familyIds, 2);
      await feed.publish(published);
      await expect.poll(() => first.received.length, { timeout: 15_000 }).toBe(published.length);
      await expect.poll(() => second.received.length, { timeout: 15_000 }).toBe(published.length);
      expect(new Set(first.received.map((e) => e.eventId))).toEqual(new Set(published.map((e) => e.eventId)));
      expect(new Set(second.received.map((e) => e.eventId))).toEqual(new Set(published.map((e) => e.eventId)));
    });

    it('is ready only once the events present at the start were delivered', async () => {
      const familyIds = families(3);
      const published = history(familyIds, 10);
      await feed.publish(published);
      const { received, consumer } = await collect(new Set(familyIds));
      await consumer.ready;
      expect(received.length).toBe(published.length);
    });

    it('starts at the first event recorded at or after `since`, skipping older ones', async () => {
      // A feed of its own: `since` picks a starting point per partition, and another test's recent
      // events sitting before the old one in a partition would (rightly) be delivered too.
      const own = await createFixture();
      try {
        const [oldFamily, newFamily] = families(2) as [string, string];
        const twoHoursAgo = systemClock.now() - 2 * 3600_000;
        const old = [record(tokenRevoked(oldFamily, 0, Math.floor(twoHoursAgo / 1000)), twoHoursAgo)];
        const recent = [record(tokenRevoked(newFamily, 3, nowSeconds()))];
        await own.feed.publish(old);
        await own.feed.publish(recent);
        const received: string[] = [];
        const consumer = await own.feed.consume({
          groupId: `contract-${randomUUID()}`,
          since: systemClock.now() - 3600_000,
          onEvent: (delivered) => void received.push(delivered.eventId),
        });
        await consumer.ready;
        expect(received).toEqual(recent.map((e) => e.eventId));
        await consumer.close();
      } finally {
        await own.teardown();
      }
    });

    it('is ready at once when nothing is recorded after `since`, then delivers what arrives', async () => {
      const familyId = family();
      const { received, consumer } = await collect(new Set([familyId]), { since: systemClock.now() + 3600_000 });
      await consumer.ready;
      expect(received).toEqual([]);
      // `since` chooses where to start, it is not a filter: what is published later is delivered.
      await feed.publish([record(tokenRevoked(familyId, 1, nowSeconds()))]);
      await expect.poll(() => received.length, { timeout: 15_000 }).toBe(1);
    });

    it('refuses to publish once closed', async () => {
      const own = await createFixture();
      await own.feed.close();
      await expect(own.feed.publish(history(families(1), 1))).rejects.toBeInstanceOf(FeedClosed);
      await own.teardown();
    });
  });
}
