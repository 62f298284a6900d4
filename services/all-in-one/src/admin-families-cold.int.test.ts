import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { streams, type TesseraEvent } from '@tessera/events';
import { writeBulkLog, type BulkEntry } from '@tessera/event-store-sqlite/testing';
import { ManualClock, epochSeconds } from '@tessera/timing';
import { processCpuSeconds, threadCpuSeconds } from '../../../test/support/thread-cpu.js';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * The first account revocation after a start builds the admin API's families read model from the
 * whole log. On a long history (60,000 families of one account, 500 of them still live) the
 * build is the families thread's, not the request thread's, it keeps none of the dead families,
 * and the answer does not wait for it: 200, or 503 with Retry-After while it builds. How long a
 * build takes on a given machine is the benchmark's to measure, not this test's.
 */
const T = 1_900_000_000;
const clock = new ManualClock(T * 1000);
const dead = 60_000;
const live = 500;
const hash = 'H'.repeat(43);
let tessera: InProcessAllInOne;
let adminToken: string;

function* history(): Generator<BulkEntry> {
  const accountId = 'acct-big';
  const registered: TesseraEvent[] = [
    { type: 'AccountRegistered', v: 1, accountId, name: 'Big shop', permissions: [], at: T - 40 * 86_400 },
    { type: 'ApiCredentialIssued', v: 1, accountId, credentialId: 'cred', apiLoginId: 'tsl_big', transactionKeyHash: hash, at: T - 40 * 86_400 },
  ];
  for (const event of registered) yield { stream: streams.account(accountId), event, recordedAt: (T - 40 * 86_400) * 1000 };
  for (let i = 0; i < dead + live; i += 1) {
    // The dead ones a month ago (refresh tokens of 7 days), the live ones an hour ago.
    const issuedAt = i < dead ? T - 30 * 86_400 + Math.floor(i / 10) : T - 3600;
    const familyId = `fam-${i}`;
    yield {
      stream: streams.family(familyId),
      event: { type: 'TokenIssued', v: 1, familyId, accountId, credentialId: 'cred', apiLoginId: 'tsl_big', generation: 0, refreshTokenHash: hash, jti: `j-${i}`, scope: [], issuedAt, accessExpiresAt: issuedAt + 3600, refreshExpiresAt: issuedAt + 7 * 86_400 },
      recordedAt: issuedAt * 1000,
    };
  }
}

const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec((await tessera.admin.inject({ method: 'GET', url: '/metrics' })).body)?.[1] ?? Number.NaN);

beforeAll(async () => {
  tessera = await startInProcess({ clock, prepare: (dataDir) => writeBulkLog(join(dataDir, 'events.db'), history()) });
  const now = () => epochSeconds(clock);
  adminToken = (await createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now, actor: 'test' }).create({ name: 'revoker', scopes: ['tokens:revoke'] })).adminToken;
  // Read models and the audit index (which fills in the background after a start) caught up: the probe below judges the revocation alone.
  await tessera.caughtUp();
}, 120_000);
afterAll(async () => {
  await tessera?.close();
});

describe('the first account revocation on a long history', () => {
  it('answers 200, or 503 with Retry-After while building; reads the log off the request thread, and keeps only the live families', async () => {
    const revoke = () => tessera.admin.inject({ method: 'POST', url: '/admin/v1/accounts/acct-big/revoke-tokens', headers: { authorization: `Bearer ${adminToken}` } });
    const threadCpuBefore = threadCpuSeconds();
    const processCpuBefore = processCpuSeconds();
    const first = await revoke();
    // Built in the background: 200 when it was quick enough, else 503 with Retry-After.
    if (first.statusCode === 503) expect(first.headers['retry-after']).toBeDefined();
    else expect(first.json()).toEqual({ revoked_families: live });
    // Once built: the live families, and no more.
    await expect.poll(async () => (await revoke()).statusCode, { timeout: 60_000, interval: 500 }).toBe(200);
    // Reading 60,500 families is the bulk of the work, and it is the families thread's: the request
    // thread's share is its own (the routes, the 500 revocations' commands), not the read.
    const requestThreadShare = (threadCpuSeconds() - threadCpuBefore) / (processCpuSeconds() - processCpuBefore);
    expect(requestThreadShare).toBeLessThan(0.5);
    expect(await metric('tessera_admin_families_entries')).toBeLessThanOrEqual(live);
  }, 120_000);
});
