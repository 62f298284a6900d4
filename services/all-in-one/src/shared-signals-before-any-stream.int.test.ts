import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { epochSeconds, systemClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * A deployment whose receivers have made no stream yet: no replica takes the delivery lease (none
 * contends before a stream exists), so no replica holds the pending SETs. What names no stream of
 * the receiver's is still answered as such, here, not 503 for want of a holder.
 */
let tessera: InProcessAllInOne;
let receiverToken = '';

beforeAll(async () => {
  tessera = await startInProcess({ env: { TESSERA_PUBLIC_URL: 'https://tessera.example.test' } });
  const adminTokens = createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'cli' });
  const { adminToken } = await adminTokens.create({ name: 'signals', scopes: ['ssf:receivers'] });
  const created = await tessera.admin!.inject({ method: 'POST', url: '/admin/v1/ssf/receivers', payload: { name: 'early' }, headers: { authorization: `Bearer ${adminToken}` } });
  expect(created.statusCode).toBe(201);
  receiverToken = created.json<{ token: string }>().token;
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

describe('Shared Signals before any stream exists', () => {
  it.each([
    ['GET', '/ssf/status?stream_id=no-such-stream', undefined],
    ['POST', '/ssf/status', { stream_id: 'no-such-stream', status: 'paused' }],
    ['POST', '/ssf/poll?stream_id=no-such-stream', { returnImmediately: true }],
  ] as const)('answers %s %s for a stream that does not exist 404, not 503', async (method, url, payload) => {
    const answer = await tessera.app.inject({ method, url, ...(payload ? { payload } : {}), headers: { authorization: `Bearer ${receiverToken}` } });
    expect(answer.statusCode).toBe(404);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
