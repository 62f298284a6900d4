import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * The control region's fence, through the compiled CLI and a running server of one region (the
 * other regions' promotions reach a region through Kafka: `npm run sim:regions` runs that part).
 * Region a starts as the control region; `tessera regions promote-control --region b`, run in a,
 * moves it, and from then on a's CLI and a's admin API refuse account writes, naming b.
 */
const cliPath = join(resolve(import.meta.dirname, '..', '..'), 'services', 'cli', 'bin', 'tessera.js');
const run = promisify(execFile);
const regionEnv = {
  TESSERA_REGION: 'a',
  TESSERA_CONTROL_REGION: 'a',
  TESSERA_PEER_REGIONS: 'b=https://127.0.0.1:1',
  TESSERA_PEER_SECRET: 's'.repeat(40),
  // No mirrored topics: with a broker in the environment (CI's) b's would be followed, and nothing makes them here.
  TESSERA_MIRRORED_REGIONS: 'none',
};

let a: TesseraProcess;
beforeAll(async () => {
  a = await startTessera(regionEnv);
});
afterAll(async () => {
  await a?.stop();
});

/** The CLI against a's data folder, with a's variables (less those named undefined). */
async function cli(args: string[], without: readonly string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...a.env };
  for (const name of without) delete env[name];
  try {
    const { stdout, stderr } = await run(process.execPath, [cliPath, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
const revokeTokens = (accountId: string, adminToken: string) =>
  a.adminRequest(`/admin/v1/accounts/${accountId}/revoke-tokens`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` } });

describe('account writes belong to the control region', () => {
  let accountId: string;
  let adminToken: string;

  it('are made by the CLI and the admin API in the control region (a, epoch 0)', async () => {
    const created = await cli(['accounts', 'create', '--name', 'Control', '--json']);
    expect(created.code).toBe(0);
    accountId = (JSON.parse(created.stdout) as { account_id: string }).account_id;
    adminToken = (JSON.parse((await cli(['admin-tokens', 'create', '--name', 'ops', '--scope', 'tokens:revoke', '--json'])).stdout) as { admin_token: string }).admin_token;
    await expect.poll(async () => (await revokeTokens(accountId, adminToken)).status, { timeout: 5_000, interval: 100 }).toBe(200);
  });

  it('promote-control refuses, as a usage error, a region it does not know, no region, or a region without TESSERA_CONTROL_REGION', async () => {
    expect((await cli(['regions', 'promote-control', '--region', 'zz'])).code).toBe(2);
    expect((await cli(['regions', 'promote-control'])).code).toBe(2);
    const unfenced = await cli(['regions', 'promote-control', '--region', 'b'], ['TESSERA_CONTROL_REGION']);
    expect(unfenced.code).toBe(2);
    expect(unfenced.stderr).toContain('TESSERA_CONTROL_REGION');
  });

  it('promote-control --region b appends an epoch one above any seen, and says what it replaced', async () => {
    const promoted = await cli(['regions', 'promote-control', '--region', 'b', '--json']);
    expect(promoted.code).toBe(0);
    expect(JSON.parse(promoted.stdout)).toEqual({ region: 'b', epoch: 1, previous_region: 'a', previous_epoch: 0 });
  });

  it('from then on a\'s CLI refuses account writes with exit 5, naming the control region, and appends nothing', async () => {
    const before = JSON.parse((await cli(['accounts', 'list', '--json'])).stdout) as unknown[];
    const refused = await cli(['accounts', 'create', '--name', 'Too late', '--json']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toBe('tessera: account writes are made in the control region, b (epoch 1); this is region a\n');
    expect((await cli(['accounts', 'rotate-key', '--account', accountId])).code).toBe(5);
    expect((await cli(['accounts', 'disable', '--account', accountId])).code).toBe(5);
    expect((await cli(['accounts', 'enable', '--account', accountId])).code).toBe(5);
    expect(JSON.parse((await cli(['accounts', 'list', '--json'])).stdout)).toEqual(before);
  });

  it('and a\'s admin API refuses an account\'s cut with 409, naming the control region', async () => {
    await expect.poll(async () => (await revokeTokens(accountId, adminToken)).status, { timeout: 5_000, interval: 100 }).toBe(409);
    const refused = await revokeTokens(accountId, adminToken);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({ type: 'urn:tessera:problem:not-control-region', status: 409, detail: expect.stringContaining('control region, b (epoch 1)') });
    // A disable too, once the admin token made for it is known (401 until the server has read it).
    const writer = (JSON.parse((await cli(['admin-tokens', 'create', '--name', 'writer', '--scope', 'accounts:write', '--json'])).stdout) as { admin_token: string }).admin_token;
    const disable = () => a.adminRequest(`/admin/v1/accounts/${accountId}/disable`, { method: 'POST', headers: { authorization: `Bearer ${writer}` } });
    await expect.poll(async () => (await disable()).status, { timeout: 5_000, interval: 100 }).toBe(409);
    expect((await disable()).json()).toMatchObject({ type: 'urn:tessera:problem:not-control-region', status: 409 });
    expect((await a.adminRequest('/metrics')).text).toMatch(/^tessera_account_writes_allowed 0$/m);
    expect((await a.adminRequest('/metrics')).text).toMatch(/^tessera_control_region_epoch 1$/m);
  });

  it('a second promotion, back to a, takes the next epoch, and a writes again', async () => {
    const promoted = await cli(['regions', 'promote-control', '--region', 'a', '--json']);
    expect(JSON.parse(promoted.stdout)).toMatchObject({ region: 'a', epoch: 2 });
    expect((await cli(['accounts', 'create', '--name', 'Back home'])).code).toBe(0);
  });
});
