import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccountService, type CreatedAccount } from '@tessera/accounts';
import { ManualClock, epochSeconds } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * An archive folder that cannot be written (here one whose parent is a file, so no folder can be
 * made there) costs issuance nothing: the process stays ready and issues, every run fails with a metric,
 * and the hot log keeps every event, closed or not, until a run succeeds.
 */
const clock = new ManualClock(1_800_000_000_000);
let tessera: InProcessAllInOne;
let account: CreatedAccount;
const scratch = mkdtempSync(join(tmpdir(), 'tessera-archive-failure-'));
const notAFolder = join(scratch, 'a-file');

async function metric(name: string): Promise<number> {
  const text = (await tessera.admin.inject({ method: 'GET', url: '/metrics' })).body;
  return Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

beforeAll(async () => {
  writeFileSync(notAFolder, 'a file where the archive folder would be');
  tessera = await startInProcess({
    clock,
    env: {
      TESSERA_CLOCK_SKEW: '0',
      TESSERA_ACCESS_TOKEN_TTL: '10',
      TESSERA_REFRESH_TOKEN_TTL: '20',
      TESSERA_HOT_RETENTION: '60',
      TESSERA_AUDIT_RETENTION: '3600',
      TESSERA_ARCHIVE_INTERVAL: '1',
      TESSERA_ARCHIVE_DIR: join(notAFolder, 'archive'),
    },
  });
  account = await createAccountService({ store: tessera.store, hasher: tessera.hasher, now: () => epochSeconds(clock), actor: 'test' }).create({
    name: 'Shop',
    permissions: ['transaction:charge'],
    legacy: false,
  });
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('an archive folder that cannot be written', () => {
  it('fails each run with a metric, keeps every event hot, and never blocks issuance or readiness', async () => {
    const issue = () => tessera.app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: account.apiLoginId, transaction_key: account.transactionKey } });
    expect((await issue()).statusCode).toBe(200);
    clock.advance(120_000);
    await vi.waitFor(async () => expect(await metric('tessera_archive_failures_total')).toBeGreaterThanOrEqual(2), { timeout: 20_000, interval: 200 });
    expect(await metric('tessera_archive_segments')).toBe(0);
    const db = new Database(join(tessera.dataDir, 'events.db'), { readonly: true });
    const families = db.prepare("SELECT count(*) FROM events WHERE stream LIKE 'tokenfamily-%'").pluck().get();
    db.close();
    expect(families).toBe(1);
    expect((await tessera.admin.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await issue()).statusCode).toBe(200);
  });
});
