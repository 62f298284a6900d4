import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminTokenIssued } from '@tessera/events';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { ManualClock, epochSeconds } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * An admin token with an expiry, on the admin listener of the all-in-one as `tessera start` wires
 * it, on a clock the test moves: the expiry travels in AdminTokenIssued, and the guard reads it
 * from its directory against the host's clock.
 */
const T = 1_800_000_000;
const clock = new ManualClock(T * 1000);
let tessera: InProcessAllInOne;
const tokens = { expiring: { id: '', token: '' }, lasting: { id: '', token: '' } };

beforeAll(async () => {
  tessera = await startInProcess({ clock });
  const service = createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(clock), actor: 'cli' });
  const expiring = await service.create({ name: 'for an hour', scopes: ['audit:read'], expiresInSeconds: 3600 });
  const lasting = await service.create({ name: 'for good', scopes: ['audit:read'] });
  tokens.expiring = { id: expiring.id, token: expiring.adminToken };
  tokens.lasting = { id: lasting.id, token: lasting.adminToken };
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

const events = (adminToken: string) => tessera.admin.inject({ method: 'GET', url: '/admin/v1/events?type=AdminTokenIssued', headers: { authorization: `Bearer ${adminToken}` } });

describe('an admin token with an expiry', () => {
  it('is recorded in AdminTokenIssued as expiresAt; a token without one has none, and an event without one is still valid', async () => {
    const issued = (await tessera.store.readAll({ types: ['AdminTokenIssued'] })).map(({ event }) => event as AdminTokenIssued);
    expect(issued.find((event) => event.adminTokenId === tokens.expiring.id)).toMatchObject({ at: T, expiresAt: T + 3600 });
    const lasting = issued.find((event) => event.adminTokenId === tokens.lasting.id)!;
    expect(lasting).not.toHaveProperty('expiresAt');
    expect(AdminTokenIssued.safeParse(lasting).success).toBe(true);
  });

  it('works until its expiry by the host\'s clock, then is refused 401 invalid_token like a revoked one; a token without one goes on', async () => {
    expect((await events(tokens.expiring.token)).statusCode).toBe(200);
    clock.set((T + 3599) * 1000);
    expect((await events(tokens.expiring.token)).statusCode).toBe(200);
    clock.set((T + 3600) * 1000);
    const refused = await events(tokens.expiring.token);
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({ type: 'urn:tessera:problem:invalid-token', status: 401 });
    clock.set((T + 10 * 365 * 86_400) * 1000);
    expect((await events(tokens.lasting.token)).statusCode).toBe(200);
  });
});
