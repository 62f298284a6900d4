import { statfsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * The metrics the alert rules on routes, signing keys and disk read (infra/prometheus/alerts.yml),
 * on /metrics of the all-in-one as `tessera start` wires it, on a clock the test moves.
 */
const clock = new ManualClock(1_800_000_000_000);
let tessera: InProcessAllInOne;

beforeAll(async () => {
  tessera = await startInProcess({ clock });
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

async function metric(name: string, labels = ''): Promise<number | undefined> {
  const text = (await tessera.admin.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('tessera_http_responses_total', () => {
  it('counts answers by route pattern and status class, with "unmatched" for a path no route serves', async () => {
    const route = '{route="/v5/Authorization/get-oauth-token",status_class="4xx"}';
    const before = (await metric('tessera_http_responses_total', route)) ?? 0;
    for (let i = 0; i < 3; i += 1) {
      const answer = await tessera.app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: 'tsl_nobody', transaction_key: 'tsk_wrong' } });
      expect(answer.statusCode).toBe(401);
    }
    expect(await metric('tessera_http_responses_total', route)).toBe(before + 3);
    expect((await tessera.app.inject({ method: 'GET', url: '/no/such/path/a1b2c3' })).statusCode).toBe(404);
    expect(await metric('tessera_http_responses_total', '{route="unmatched",status_class="4xx"}')).toBeGreaterThanOrEqual(1);
    expect(await metric('tessera_http_responses_total', '{route="/healthz",status_class="2xx"}')).toBeUndefined();
    await tessera.app.inject({ method: 'GET', url: '/healthz' });
    expect(await metric('tessera_http_responses_total', '{route="/healthz",status_class="2xx"}')).toBe(1);
  });
});

describe('tessera_signing_key_age_seconds', () => {
  it('is the time since the key the issuer signs with was published, by the host\'s clock', async () => {
    const now = await metric('tessera_signing_key_age_seconds');
    expect(now).toBeGreaterThanOrEqual(0);
    clock.advance(3_600_000);
    expect(await metric('tessera_signing_key_age_seconds')).toBe(now! + 3600);
  });
});

describe('tessera_data_dir_free_bytes and tessera_data_dir_size_bytes', () => {
  it('measure the file system of the data folder', async () => {
    const { bavail, blocks, bsize } = statfsSync(tessera.dataDir);
    expect(await metric('tessera_data_dir_size_bytes')).toBe(blocks * bsize);
    // Others write on the same disk meanwhile: within 100 MB.
    expect(Math.abs((await metric('tessera_data_dir_free_bytes'))! - bavail * bsize)).toBeLessThan(100 * 1024 * 1024);
  });
});
