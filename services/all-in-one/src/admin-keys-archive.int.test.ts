import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { epochSeconds, systemClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/** The signing keys' and the archive's status routes of the admin API, in the all-in-one as `tessera start` wires it. */
let tessera: InProcessAllInOne;
let auditor = '';
let other = '';

beforeAll(async () => {
  tessera = await startInProcess();
  const service = createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(systemClock), actor: 'cli' });
  auditor = (await service.create({ name: 'auditor', scopes: ['audit:read'] })).adminToken;
  other = (await service.create({ name: 'writer', scopes: ['accounts:write'] })).adminToken;
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

const get = (url: string, token: string) => tessera.admin.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

describe('GET /admin/v1/signing-keys', () => {
  it('names the key the JWKS serves as current, with the date it was published; another scope is 403', async () => {
    const answer = await get('/admin/v1/signing-keys', auditor);
    expect(answer.statusCode).toBe(200);
    const { keys } = answer.json<{ keys: { kid: string; published_at: string; current: boolean; retained_until: string | null; in_jwks: boolean }[] }>();
    const jwks = (await tessera.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{ keys: { kid: string }[] }>();
    expect(keys.map((key) => key.kid)).toEqual(jwks.keys.map((key) => key.kid));
    expect(keys.filter((key) => key.current)).toHaveLength(1);
    expect(keys[0]).toMatchObject({ current: true, retained_until: null, in_jwks: true });
    expect(Date.parse(keys[0]!.published_at)).toBeLessThanOrEqual(Date.now());
    expect((await get('/admin/v1/signing-keys', other)).statusCode).toBe(403);
  });
});

describe('GET /admin/v1/archive/status', () => {
  it('answers an archive not written yet with no segments and no head; another scope is 403', async () => {
    const answer = await get('/admin/v1/archive/status', auditor);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ segments: 0, archived_events: 0, archive_bytes: 0, oldest_archived: null, newest_archived: null, manifest_entries: 0, deleted_segments: 0, manifest_head_sha256: null, keys: [] });
    expect((await get('/admin/v1/archive/status', other)).statusCode).toBe(403);
  });
});
