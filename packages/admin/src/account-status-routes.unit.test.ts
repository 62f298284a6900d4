import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { streams, type AccountEvent } from '@tessera/events';
import { EventStoreUnavailable, InMemoryEventStore, type AppendResult, type ExpectedRevision, type NewEvent } from '@tessera/event-store';
import { createMetrics, createReadiness } from '@tessera/host';
import { buildApp } from '@tessera/server';
import { createAdminGuard } from './admin-auth.js';
import { accountStatusRoutes } from './account-status-routes.js';
import { createAccountStatus } from './account-status.js';

/**
 * The disable and enable routes through fastify's inject(), on an in-memory log whose appends can
 * be made to fail, as a full disk's do: what the store cannot take is a 503, and nothing changes.
 */
class RefusingStore extends InMemoryEventStore {
  refusing = false;
  override async append(stream: string, events: readonly NewEvent[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (this.refusing) throw new EventStoreUnavailable('the disk is full');
    return super.append(stream, events, options);
  }
}

const store = new RefusingStore();
let app: FastifyInstance;
const writer = { id: 'adm_writer', name: 'writer', scopes: new Set(['accounts:write']) };

beforeAll(async () => {
  const registered: AccountEvent[] = [{ type: 'AccountRegistered', v: 1, accountId: 'acct_1', name: 'Shop', permissions: [], at: 100 }];
  await store.append(streams.account('acct_1'), registered.map((event) => ({ event })), { expectedRevision: 'no_stream' });
  const guard = createAdminGuard({ tokens: { authenticate: (presented) => (presented === 'tsa_writer' ? writer : undefined) } });
  const status = createAccountStatus({ store, now: () => 200, families: { longestTokenLifetime: async () => 3600, liveFamiliesOnceAt: async () => [] } });
  app = await buildApp({
    logLevel: 'silent',
    readiness: createReadiness(),
    metrics: createMetrics(),
    routes: [
      async (instance) => {
        await instance.register(guard.plugin);
        await instance.register(accountStatusRoutes, { guard, status });
      },
    ],
  });
});
afterAll(async () => {
  await app?.close();
  await store.close();
});

const post = (action: 'disable' | 'enable') => app.inject({ method: 'POST', url: `/admin/v1/accounts/acct_1/${action}`, headers: { authorization: 'Bearer tsa_writer' } });

describe('a store that cannot append', () => {
  it('answers disable and enable 503 problem+json, and the account keeps its status', async () => {
    store.refusing = true;
    const refusedDisable = await post('disable');
    expect(refusedDisable.statusCode).toBe(503);
    expect(refusedDisable.headers['content-type']).toMatch(/^application\/problem\+json/);
    store.refusing = false;
    expect((await store.readStream(streams.account('acct_1'))).map((recorded) => recorded.event.type)).toEqual(['AccountRegistered']);
    expect((await post('disable')).json()).toMatchObject({ status: 'disabled', changed: true });
    store.refusing = true;
    const refusedEnable = await post('enable');
    expect(refusedEnable.statusCode).toBe(503);
    expect(refusedEnable.headers['content-type']).toMatch(/^application\/problem\+json/);
    store.refusing = false;
    expect((await store.readStream(streams.account('acct_1'))).map((recorded) => recorded.event.type)).toEqual(['AccountRegistered', 'AccountDisabled', 'AccountTokensRevoked']);
  });
});
