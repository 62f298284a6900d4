import { InMemoryEventStore } from '@tessera/event-store';
import { ssfStreams } from '@tessera/events';
import { ManualClock, ManualScheduler } from '@tessera/timing';
import { describe, expect, it } from 'vitest';
import { DeliveryLease } from './delivery-lease.js';
import { contenderDecision, holderDecision, type NewestLeaseEvent } from './lease-decision.js';

const timing = { ttlMs: 30_000 };
const event = (kind: NewestLeaseEvent['kind'], replica = 'b', revision = 4n): NewestLeaseEvent => ({ kind, replica, epoch: 3, revision });

describe('the lease decision of a replica that does not hold it', () => {
  it('takes at once when the log has no lease event, or its newest is a release', () => {
    expect(contenderDecision('a', { newest: undefined, seenSinceMs: 1_000 }, 1_000, timing)).toBe('take');
    expect(contenderDecision('a', { newest: event('released'), seenSinceMs: 1_000 }, 1_000, timing)).toBe('take');
  });

  it('waits while the holder has written within a TTL of its own time, and takes once it has been silent a whole TTL', () => {
    for (const kind of ['taken', 'renewed', 'checkpointed'] as const) {
      expect(contenderDecision('a', { newest: event(kind), seenSinceMs: 1_000 }, 1_000 + 29_999, timing)).toBe('wait');
      expect(contenderDecision('a', { newest: event(kind), seenSinceMs: 1_000 }, 1_000 + 30_000, timing)).toBe('take');
    }
  });

  it('takes at once when the newest event names itself: a restart of the holder', () => {
    expect(contenderDecision('b', { newest: event('renewed', 'b'), seenSinceMs: 1_000 }, 1_000, timing)).toBe('take');
  });
});

describe('the lease decision of its holder', () => {
  it('holds until TTL - TTL/6 after its last successful renewal started, then has lapsed', () => {
    expect(holderDecision({ wroteRevision: 4n, newestRevision: 4n, renewalStartedMs: 0 }, 24_999, timing)).toBe('hold');
    expect(holderDecision({ wroteRevision: 4n, newestRevision: 4n, renewalStartedMs: 0 }, 25_000, timing)).toBe('lapsed');
  });

  it('is fenced when the log holds an event it did not write', () => {
    expect(holderDecision({ wroteRevision: 4n, newestRevision: 5n, renewalStartedMs: 0 }, 1, timing)).toBe('fenced');
  });
});

/**
 * Replicas on one log, each with its own timers on one shared clock: a replica whose timers are no
 * longer run is a killed process (it renews nothing and learns nothing).
 */
class Replicas {
  readonly store = new InMemoryEventStore();
  readonly clock = new ManualClock(0);
  readonly running = new Set<ManualScheduler>();

  start(name: string) {
    const scheduler = new ManualScheduler(this.clock);
    const changes: string[] = [];
    const lease = new DeliveryLease({
      store: this.store,
      replica: name,
      url: () => `https://${name}.replicas.test`,
      certificateSha256: () => undefined,
      ttlMs: 3_000,
      monotonic: this.clock,
      scheduler,
      now: () => Math.floor(this.clock.now() / 1000),
      logger: { info: () => undefined, warn: () => undefined },
      onTaken: (epoch) => changes.push(`taken ${epoch}`),
      onLost: async (reason) => void changes.push(`lost ${reason}`),
    });
    this.running.add(scheduler);
    lease.start();
    return { lease, changes, kill: () => this.running.delete(scheduler) };
  }

  /** Moves the shared clock in steps of 100 ms, running every live replica's timers and letting their reads and appends settle. */
  async advance(ms: number): Promise<void> {
    const end = this.clock.now() + ms;
    while (this.clock.now() < end) {
      const step = Math.min(end, this.clock.now() + 100);
      for (const scheduler of this.running) await scheduler.advanceTo(step);
      if (this.running.size === 0) this.clock.set(step);
    }
  }
}

describe('the lease over a log', () => {
  it('one replica takes it, renews it, and the other takes over only a TTL after the holder went silent, with the next epoch', async () => {
    const replicas = new Replicas();
    const a = replicas.start('a');
    await replicas.advance(100);
    expect(a.changes).toEqual(['taken 1']);
    const b = replicas.start('b');
    await replicas.advance(10_000);
    expect(b.changes).toEqual([]);
    expect(b.lease.holder?.url).toBe('https://a.replicas.test');
    expect(a.lease.valid).toBe(true);
    const renewals = (await replicas.store.readStream(ssfStreams.delivery())).filter((recorded) => recorded.event.type === 'SsfDeliveryLeaseRenewed');
    // Every TTL/3 (1 s of a 3 s TTL) over 10 s.
    expect(renewals.length).toBeGreaterThanOrEqual(9);

    // A is killed: by its own clock its lease lapses (TTL - TTL/6 after its last renewal) before B may take it (a TTL after B saw that renewal).
    a.kill();
    await replicas.advance(2_600);
    expect(a.lease.valid).toBe(false);
    expect(b.changes).toEqual([]);
    await replicas.advance(1_000);
    expect(b.changes).toEqual(['taken 2']);
    expect(b.lease.valid).toBe(true);

    // A's next append expects the revision it wrote last: refused, and A stops delivering.
    await expect(a.lease.appendCheckpoint({ type: 'SsfDeliveryCheckpointed', positions: {}, at: 0 })).rejects.toThrow(/expected revision/);
    expect(a.changes).toEqual(['taken 1', 'lost fenced']);
  });

  it('a released lease is taken at once by the other replica', async () => {
    const replicas = new Replicas();
    const a = replicas.start('a');
    await replicas.advance(100);
    const b = replicas.start('b');
    await replicas.advance(1_000);
    await a.lease.stop();
    expect(a.changes).toEqual(['taken 1', 'lost stopping']);
    expect(b.lease.holder?.url).toBe('https://a.replicas.test');
    await replicas.advance(600);
    expect(b.changes).toEqual(['taken 2']);
  });

  it('a restarted replica takes its own lease back at once, and its earlier life is fenced', async () => {
    const replicas = new Replicas();
    const before = replicas.start('a');
    await replicas.advance(2_000);
    before.kill();
    const after = replicas.start('a');
    await replicas.advance(600);
    expect(after.changes).toEqual(['taken 2']);
    await expect(before.lease.appendCheckpoint({ type: 'SsfDeliveryCheckpointed', positions: {}, at: 0 })).rejects.toThrow(/expected revision/);
  });
});
