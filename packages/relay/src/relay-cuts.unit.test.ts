import { afterEach, describe, expect, it } from 'vitest';
import { streams, type AccountTokensRevoked, type CredentialTokensRevoked } from '@tessera/events';
import { InMemoryEventStore } from '@tessera/event-store';
import { createInProcessFeed, feedKey, silentLogger } from '@tessera/feed';
import { startRevocationConsumer, type RevocationConsumer } from '@tessera/revocations';
import { createMemoryCheckpoint } from './relay-checkpoint.js';
import { createRelay, type Relay } from './relay.js';
import { systemClock } from '@tessera/timing';

/**
 * The Kafka path of a cut without a broker: log → relay → feed (the in-process adapter carries the
 * same encoded messages Kafka would) → @tessera/revocations. The broker itself is covered by the
 * relay's and the feed's Kafka suites, which need no change for a new event type.
 */
const now = Math.floor(systemClock.now() / 1000);
const accountCut: AccountTokensRevoked = { type: 'AccountTokensRevoked', v: 1, accountId: 'acc-1', notBefore: now + 1, rejectsUntil: now + 3600, reason: 'operator', at: now };
const keyCut: CredentialTokensRevoked = {
  type: 'CredentialTokensRevoked',
  v: 1,
  accountId: 'acc-2',
  credentialId: 'cred-old',
  apiId: 'tla_old',
  notBefore: now + 1,
  rejectsUntil: now + 1800,
  reason: 'legacy-key-revoked',
  at: now,
};

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

async function world(): Promise<{ store: InMemoryEventStore; relay: Relay; downstream: RevocationConsumer }> {
  const store = new InMemoryEventStore();
  const feed = createInProcessFeed();
  const relay = createRelay({ store, feed, checkpoint: createMemoryCheckpoint(), logger: silentLogger });
  await relay.start();
  const downstream = await startRevocationConsumer({ feed, logger: silentLogger });
  stop = async () => {
    await downstream.close();
    await relay.stop();
    await feed.close();
    await store.close();
  };
  return { store, relay, downstream };
}

describe('cuts through the relay and the feed', () => {
  it('an account cut and a credential cut appended to the log reach a downstream consumer, which then refuses the tokens issued before them', async () => {
    const { store, downstream } = await world();
    await downstream.ready;
    expect(downstream.isCutOff({ accountId: 'acc-1', clientId: 'tsl_x', issuedAt: now })).toBe(false);
    await store.append(streams.account('acc-1'), [{ event: accountCut }], { expectedRevision: 'any' });
    await store.append(streams.account('acc-2'), [{ event: keyCut }], { expectedRevision: 'any' });
    await expect.poll(() => downstream.isCutOff({ accountId: 'acc-1', clientId: 'tsl_x', issuedAt: now }), { timeout: 2_000, interval: 5 }).toBe(true);
    await expect.poll(() => downstream.isCutOff({ accountId: 'acc-2', clientId: 'tla_old', issuedAt: now }), { timeout: 2_000, interval: 5 }).toBe(true);
    // Issued at notBefore, or by another client of the account: not cut.
    expect(downstream.isCutOff({ accountId: 'acc-1', clientId: 'tsl_x', issuedAt: now + 1 })).toBe(false);
    expect(downstream.isCutOff({ accountId: 'acc-2', clientId: 'tsl_other', issuedAt: now })).toBe(false);
  });

  it('the relay publishes the cuts, keyed by account, and never an admin token event', async () => {
    const { store, relay, downstream } = await world();
    await store.append(streams.adminToken('adm'), [{ event: { type: 'AdminTokenIssued', v: 1, adminTokenId: 'adm', name: 'ops', scopes: ['audit:read'], tokenHash: 'h'.repeat(43), at: now } }], {
      expectedRevision: 'no_stream',
    });
    await store.append(streams.account('acc-1'), [{ event: accountCut }], { expectedRevision: 'any' });
    await expect.poll(() => relay.published(), { timeout: 2_000, interval: 5 }).toBe(1);
    await downstream.ready;
    expect(downstream.stats()).toMatchObject({ applied: 1, failed: 0, entries: 1 });
    expect([feedKey(accountCut), feedKey(keyCut)]).toEqual(['acc-1', 'acc-2']);
  });
});
