import { generateKeyPairSync } from 'node:crypto';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccountService, type CreatedAccount } from '@tessera/accounts';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { fingerprintOf, verifyArchive } from '@tessera/archive';
import { ManualClock, epochSeconds } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * The whole cycle in seconds, through the composition `tessera start` runs: a hot window of 60 s,
 * tokens living 10 s (refresh 20 s), the clock moved by hand. Families close, leave the hot log
 * and the hot index for a signed segment, and the admin API's answers (events page by page,
 * access-at at a past instant) are the same before and after; issuance goes on throughout.
 */
const T = 1_800_000_000;
const clock = new ManualClock(T * 1000);
let tessera: InProcessAllInOne;
let account: CreatedAccount;
let auditToken: string;

const auth = () => ({ authorization: `Bearer ${auditToken}` });

async function issue(): Promise<{ token: string; refresh_token: string }> {
  const answer = await tessera.app.inject({
    method: 'POST',
    url: '/v5/Authorization/get-oauth-token',
    payload: { api_login_id: account.apiLoginId, transaction_key: account.transactionKey },
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json();
}

async function allPages(): Promise<{ rows: unknown[]; cursors: (string | null)[] }> {
  const rows: unknown[] = [];
  const cursors: (string | null)[] = [];
  let cursor: string | null = null;
  do {
    const answer: { statusCode: number; body: string; json: <T>() => T } = await tessera.admin.inject({ method: 'GET', url: `/admin/v1/events?account=${account.accountId}&limit=3${cursor === null ? '' : `&cursor=${cursor}`}`, headers: auth() });
    expect(answer.statusCode, answer.body).toBe(200);
    const body: { events: unknown[]; next_cursor: string | null } = answer.json();
    rows.push(...body.events);
    cursors.push(body.next_cursor);
    cursor = body.next_cursor;
  } while (cursor !== null);
  return { rows, cursors };
}

async function accessAt(seconds: number): Promise<unknown> {
  const answer = await tessera.admin.inject({ method: 'GET', url: `/admin/v1/accounts/${account.accountId}/access-at?at=${new Date(seconds * 1000).toISOString()}`, headers: auth() });
  expect(answer.statusCode, answer.body).toBe(200);
  // The log's position moves on with every event; the rest of the answer must not.
  return { ...answer.json<Record<string, unknown>>(), log_position: undefined };
}

async function metric(name: string): Promise<number> {
  const text = (await tessera.admin.inject({ method: 'GET', url: '/metrics' })).body;
  return Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

/** The audit index reflects the log's head: its answers say so in log_position. */
async function indexed(): Promise<void> {
  const head = String(await tessera.store.headPosition());
  await vi.waitFor(
    async () => {
      const answer = await tessera.admin.inject({ method: 'GET', url: `/admin/v1/events?limit=1`, headers: auth() });
      expect(answer.json<{ log_position: string | null }>().log_position).toBe(head);
    },
    { timeout: 10_000, interval: 50 },
  );
}

const hotStreams = () => {
  const db = new Database(join(tessera.dataDir, 'events.db'), { readonly: true });
  try {
    return db.prepare('SELECT stream FROM events').pluck().all() as string[];
  } finally {
    db.close();
  }
};

beforeAll(async () => {
  tessera = await startInProcess({
    clock,
    env: {
      TESSERA_CLOCK_SKEW: '0',
      TESSERA_ACCESS_TOKEN_TTL: '10',
      TESSERA_REFRESH_TOKEN_TTL: '20',
      TESSERA_HOT_RETENTION: '60',
      TESSERA_AUDIT_RETENTION: '3600',
      TESSERA_ARCHIVE_INTERVAL: '1',
    },
  });
  const now = () => epochSeconds(clock);
  account = await createAccountService({ store: tessera.store, hasher: tessera.hasher, now, actor: 'test' }).create({ name: 'Shop', permissions: ['transaction:charge'], legacy: false });
  auditToken = (await createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now, actor: 'test' }).create({ name: 'auditor', scopes: ['audit:read'] })).adminToken;
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

describe('a year in seconds: hot window, archive, and audit answers across both', () => {
  it('archives closed families after the hot window, keeps the answers, and keeps serving', async () => {
    // A first run completes (on the empty archive) before any token exists: every later run must
    // hold back only what the read models are past then, not what they were past at the first.
    await vi.waitFor(async () => expect(await metric('tessera_archive_last_verify_ok')).toBe(1), { timeout: 20_000, interval: 100 });
    const pairs = [];
    for (let i = 0; i < 5; i += 1) pairs.push(await issue());
    clock.advance(2000);
    const refreshed = await tessera.app.inject({ method: 'POST', url: '/v5/Authorization/refresh-oauth-token', payload: { refresh_token: pairs[0]!.refresh_token } });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const revoked = await tessera.app.inject({ method: 'POST', url: '/v5/Authorization/revoke-oauth-token', payload: { refresh_token: pairs[1]!.refresh_token } });
    expect(revoked.statusCode, revoked.body).toBe(200);
    await indexed();
    const before = await allPages();
    const accessBefore = await accessAt(T + 1);
    expect(before.rows).toHaveLength(9);
    expect(hotStreams().filter((stream) => stream.startsWith('tokenfamily-'))).toHaveLength(7);

    // Past the hot window (60 s) and every token's life (20 s): the next scheduled run archives.
    clock.advance(120_000);
    await vi.waitFor(async () => expect(await metric('tessera_archive_segments')).toBe(1), { timeout: 20_000, interval: 200 });
    expect(hotStreams().filter((stream) => stream.startsWith('tokenfamily-'))).toEqual([]);
    expect(hotStreams().some((stream) => stream.startsWith('account-'))).toBe(true);

    expect(await allPages()).toEqual(before);
    expect(await accessAt(T + 1)).toEqual(accessBefore);
    expect(verifyArchive(join(tessera.dataDir, 'archive'))).toMatchObject({ ok: true, segments: 1, rows: 7 });
    expect(existsSync(join(tessera.dataDir, 'keys', 'archive-signing.key'))).toBe(true);

    const keys = await tessera.admin.inject({ method: 'GET', url: '/admin/v1/archive/keys', headers: auth() });
    expect(keys.statusCode, keys.body).toBe(200);
    expect(keys.json()).toMatchObject({ keys: [{ fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/), public_key_pem: expect.stringContaining('BEGIN PUBLIC KEY') }], manifest_entries: 1 });
    // The admin console's archive page: what tessera archive status prints, agreeing with the pins.
    const pins = keys.json<{ keys: { fingerprint: string }[]; manifest_head_sha256: string }>();
    const status = await tessera.admin.inject({ method: 'GET', url: '/admin/v1/archive/status', headers: auth() });
    expect(status.statusCode, status.body).toBe(200);
    expect(status.json()).toMatchObject({ segments: 1, archived_events: 7, manifest_entries: 1, deleted_segments: 0, manifest_head_sha256: pins.manifest_head_sha256, keys: [pins.keys[0]!.fingerprint] });
    expect(status.json<{ archive_bytes: number }>().archive_bytes).toBeGreaterThan(0);
    expect(Date.parse(status.json<{ oldest_archived: string }>().oldest_archived)).toBeGreaterThanOrEqual(T * 1000);
    expect(await metric('tessera_archive_last_verify_ok')).toBe(1);
    expect(await metric('tessera_archive_bytes')).toBeGreaterThan(0);
    expect(await metric('tessera_hot_log_bytes')).toBeGreaterThan(0);
    expect(await metric('tessera_archive_lag_seconds')).toBeLessThan(5);

    // The process is as it was: ready, and issuing.
    expect((await tessera.admin.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    await issue();
  });

  it('an archive folder written behind its back: a dropped key is not listed, a cut manifest is a 503 naming it and an alert, and the head position never went back', async () => {
    const archiveDir = join(tessera.dataDir, 'archive');
    const head = await metric('tessera_event_store_head_position');
    const { publicKey } = generateKeyPairSync('ed25519');
    writeFileSync(join(archiveDir, 'keys', `${fingerprintOf(publicKey)}.pem`), publicKey.export({ type: 'spki', format: 'pem' }));
    const keys = await tessera.admin.inject({ method: 'GET', url: '/admin/v1/archive/keys', headers: auth() });
    expect(keys.json<{ keys: { fingerprint: string }[] }>().keys.map((key) => key.fingerprint)).not.toContain(fingerprintOf(publicKey));

    renameSync(join(archiveDir, 'manifest', '00000001.json'), join(tessera.dataDir, 'cut-entry.json'));
    const refused = await tessera.admin.inject({ method: 'GET', url: `/admin/v1/events?account=${account.accountId}&limit=3`, headers: auth() });
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json<{ detail: string }>().detail).toMatch(/the archive failed its verification.*entries were cut off/);
    const access = await tessera.admin.inject({ method: 'GET', url: `/admin/v1/accounts/${account.accountId}/access-at?at=${new Date((T + 1) * 1000).toISOString()}`, headers: auth() });
    expect(access.statusCode).toBe(503);
    await vi.waitFor(async () => expect(await metric('tessera_archive_broken')).toBe(1), { timeout: 10_000, interval: 100 });
    expect(await metric('tessera_event_store_head_position')).toBeGreaterThanOrEqual(head);

    // Put back, the answers come back.
    renameSync(join(tessera.dataDir, 'cut-entry.json'), join(archiveDir, 'manifest', '00000001.json'));
    const restored = await tessera.admin.inject({ method: 'GET', url: `/admin/v1/events?account=${account.accountId}&limit=3`, headers: auth() });
    expect(restored.statusCode, restored.body).toBe(200);
  });
});
