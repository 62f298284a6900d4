import { describe, expect, it } from 'vitest';
import type { AuthenticationFailuresCounted } from '@tessera/events';
import { EventStoreUnavailable, InMemoryEventStore } from '@tessera/event-store';
import { ManualClock, ManualScheduler } from '@tessera/timing';
import { createAuthenticationFailureCounter } from './authentication-failures.js';

const known = { accountId: 'acct_1', credentialId: 'cred_1', clientId: 'tsl_1' };
const counted = async (store: InMemoryEventStore) =>
  (await store.readAll({ types: ['AuthenticationFailuresCounted'] })).map((recorded) => recorded.event as AuthenticationFailuresCounted);

describe('failed authentications, counted per credential per minute', () => {
  it('writes one event per credential per minute whatever the number of failures, and one for all unknown credentials', async () => {
    const store = new InMemoryEventStore();
    let now = 1_800_000_000; // a minute boundary
    const counter = createAuthenticationFailureCounter({ store, now: () => now });
    for (let i = 0; i < 500; i += 1) counter.record({ interface: 'v5', known });
    // An attacker inventing a new API Login ID for every attempt still makes one event a minute.
    for (let i = 0; i < 1000; i += 1) counter.record({ interface: 'v5' });
    counter.record({ interface: 'v1', known: { ...known, credentialId: 'cred_v1', clientId: 'tla_1' } });

    await counter.flush();
    expect(await counted(store)).toEqual([]); // the minute has not ended yet
    now += 60;
    counter.record({ interface: 'v5', known });
    await counter.flush();
    expect(await counted(store)).toEqual([
      { type: 'AuthenticationFailuresCounted', v: 1, interface: 'v5', ...known, minute: 1_800_000_000, count: 500 },
      { type: 'AuthenticationFailuresCounted', v: 1, interface: 'v5', minute: 1_800_000_000, count: 1000 },
      { type: 'AuthenticationFailuresCounted', v: 1, interface: 'v1', accountId: 'acct_1', credentialId: 'cred_v1', clientId: 'tla_1', minute: 1_800_000_000, count: 1 },
    ]);
    await counter.flush({ everything: true });
    expect((await counted(store)).at(-1)).toMatchObject({ minute: 1_800_000_060, count: 1 });
  });

  it('once started, flushes the ended minutes on its scheduler every interval, and everything when stopped', async () => {
    const store = new InMemoryEventStore();
    const clock = new ManualClock(1_800_000_000_000); // a minute boundary
    const scheduler = new ManualScheduler(clock);
    const counter = createAuthenticationFailureCounter({ store, now: () => Math.floor(clock.now() / 1000) });
    const stop = counter.start({ intervalMs: 10_000, scheduler });
    counter.record({ interface: 'v5', known });
    // The minute ends at 60 s; the first flush after it is the one at 60 s.
    await scheduler.advance(59_999);
    expect(await counted(store)).toEqual([]);
    await scheduler.advance(1);
    expect(await counted(store)).toEqual([{ type: 'AuthenticationFailuresCounted', v: 1, interface: 'v5', ...known, minute: 1_800_000_000, count: 1 }]);
    counter.record({ interface: 'v1' });
    await stop();
    expect((await counted(store)).at(-1)).toMatchObject({ interface: 'v1', minute: 1_800_000_060, count: 1 });
    // Stopped: no flush is scheduled any more.
    expect(scheduler.pending).toBe(0);
  });

  it('keeps the counts while the store is down and writes them, added up, once it is back', async () => {
    const store = new InMemoryEventStore();
    let down = true;
    const flaky = {
      append: (...args: Parameters<InMemoryEventStore['append']>) =>
        down ? Promise.reject(new EventStoreUnavailable('down')) : store.append(...args),
    };
    const counter = createAuthenticationFailureCounter({ store: flaky, now: () => 1_800_000_000 });
    counter.record({ interface: 'v5', known });
    await counter.flush({ everything: true });
    counter.record({ interface: 'v5', known });
    down = false;
    await counter.flush({ everything: true });
    expect(await counted(store)).toEqual([{ type: 'AuthenticationFailuresCounted', v: 1, interface: 'v5', ...known, minute: 1_800_000_000, count: 2 }]);
  });
});
