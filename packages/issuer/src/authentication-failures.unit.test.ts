import { describe, expect, it } from 'vitest';
import type { AuthenticationFailuresCounted } from '@tessera/events';
import { EventStoreUnavailable, InMemoryEventStore } from '@tessera/event-store';
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
