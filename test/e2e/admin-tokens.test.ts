import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { wireAdminApi } from '@tessera/admin';
import { loadConfig } from '@tessera/config';
import { followLog, guardAvailability, type GuardedEventStore } from '@tessera/event-store';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { buildApp, createMetrics, createReadiness, type Host } from '@tessera/server';

/**
 * `tessera admin-tokens` through the real CLI, against the admin API as a process wires it
 * (wireAdminApi over the SQLite log of the same data folder): a token the CLI makes works within a
 * second, and one it revokes stops within a second. The admin listener that will serve these routes
 * is not on this branch, so the app is built here and asked through inject().
 */
const run = promisify(execFile);
const cli = join(resolve(import.meta.dirname, '..', '..'), 'packages', 'cli', 'bin', 'tessera.js');
const dataDir = mkdtempSync(join(tmpdir(), 'tessera-admin-tokens-'));
const env = { ...process.env, TESSERA_DATA_DIR: dataDir, NODE_OPTIONS: '' };
const tessera = (args: string[]) => run(process.execPath, [cli, ...args], { env });

let store: GuardedEventStore;
let app: FastifyInstance;
let failure: unknown;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  store = guardAvailability(new SqliteEventStore({ file: join(dataDir, 'events.db') }));
  const host: Host = {
    config: loadConfig({ TESSERA_DATA_DIR: dataDir }),
    log: pino({ level: 'silent' }),
    metrics: createMetrics(),
    readiness: createReadiness(),
    onClose: (close) => void closers.push(close),
    untilReady: () => undefined,
    fatal: (error) => (failure = error),
    warnDevelopmentDefault: () => undefined,
  };
  const admin = wireAdminApi(host, store);
  // As the all-in-one and the issuer do: the admin token read model follows the log with the process's other read models.
  const following = followLog(store, admin.readers, (error) => (failure = error));
  closers.push(() => following.close());
  app = await buildApp({ logLevel: 'silent', readiness: host.readiness, metrics: host.metrics, routes: [admin.routes] });
});
afterAll(async () => {
  expect(failure).toBeUndefined();
  await app?.close();
  for (const close of closers.reverse()) await close();
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** An admin route that needs tokens:revoke: 404 once authenticated (no such family), 401/403 otherwise. */
const revokeUnknownFamily = async (adminToken: string) =>
  (await app.inject({ method: 'POST', url: '/admin/v1/families/no-such-family/revoke', headers: { authorization: `Bearer ${adminToken}` } })).statusCode;
const withinASecond = { timeout: 1_000, interval: 20 };

describe('tessera admin-tokens', () => {
  it('list in a folder with no Tessera data is not found (exit 3), and creates nothing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'tessera-admin-tokens-empty-'));
    try {
      await expect(run(process.execPath, [cli, 'admin-tokens', 'list'], { env: { ...env, TESSERA_DATA_DIR: empty } })).rejects.toMatchObject({ code: 3 });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('create --json prints exactly admin_token and id; the admin API accepts the token within a second, with its scope', async () => {
    const { stdout } = await tessera(['admin-tokens', 'create', '--name', 'ops', '--scope', 'tokens:revoke', '--json']);
    const created = JSON.parse(stdout) as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(['admin_token', 'id']);
    expect(created.admin_token).toMatch(/^tsa_/);
    await expect.poll(() => revokeUnknownFamily(created.admin_token!), withinASecond).toBe(404);
  });

  it('a token without the route\'s scope is 403; list shows id, name, scopes, created and revoked, never the token', async () => {
    const reader = JSON.parse((await tessera(['admin-tokens', 'create', '--name', 'auditor', '--scope', 'audit:read', '--json'])).stdout) as Record<string, string>;
    await expect.poll(() => revokeUnknownFamily(reader.admin_token!), withinASecond).toBe(403);
    const { stdout } = await tessera(['admin-tokens', 'list', '--json']);
    const rows = JSON.parse(stdout) as Record<string, unknown>[];
    expect(rows.find((row) => row.id === reader.id)).toEqual({ id: reader.id, name: 'auditor', scopes: ['audit:read'], created: expect.stringMatching(/^\d{4}-/), revoked: null });
    expect(stdout).not.toContain(reader.admin_token);
    expect((await tessera(['admin-tokens', 'list'])).stdout).not.toContain(reader.admin_token);
  });

  it('revoke --id stops the token within a second (401), and list shows when', async () => {
    const created = JSON.parse((await tessera(['admin-tokens', 'create', '--name', 'leaving', '--scope', 'tokens:revoke', '--json'])).stdout) as Record<string, string>;
    await expect.poll(() => revokeUnknownFamily(created.admin_token!), withinASecond).toBe(404);
    const revoked = JSON.parse((await tessera(['admin-tokens', 'revoke', '--id', created.id!, '--json'])).stdout) as Record<string, unknown>;
    expect(revoked).toEqual({ id: created.id, revoked: expect.stringMatching(/^\d{4}-/), already_revoked: false });
    await expect.poll(() => revokeUnknownFamily(created.admin_token!), withinASecond).toBe(401);
    const rows = JSON.parse((await tessera(['admin-tokens', 'list', '--json'])).stdout) as Record<string, unknown>[];
    expect(rows.find((row) => row.id === created.id)?.revoked).toBe(revoked.revoked);
  });

  it('as a process wires it, account revocation starts its families read model on first use, then answers; the cut is in the log with the admin token\'s id', async () => {
    const admin = JSON.parse((await tessera(['admin-tokens', 'create', '--name', 'revoker', '--scope', 'tokens:revoke', '--json'])).stdout) as Record<string, string>;
    const account = JSON.parse((await tessera(['accounts', 'create', '--name', 'Shop', '--json'])).stdout) as Record<string, string>;
    const revokeTokens = (accountId: string) =>
      app.inject({ method: 'POST', url: `/admin/v1/accounts/${accountId}/revoke-tokens`, headers: { authorization: `Bearer ${admin.admin_token}` } });
    await expect.poll(async () => (await revokeTokens('no-such-account')).statusCode, withinASecond).toBe(404);
    const answer = await revokeTokens(account.account_id!);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ revoked_families: 0 });
    const [cut] = (await store.readStream(`account-${account.account_id}`)).filter((r) => r.event.type === 'AccountTokensRevoked');
    expect(cut?.metadata).toMatchObject({ actor: `admin:${admin.id}`, accountId: account.account_id });
  });

  it.each([
    ['an unknown scope', ['admin-tokens', 'create', '--name', 'x', '--scope', 'admin:all'], 2],
    ['no scope', ['admin-tokens', 'create', '--name', 'x'], 2],
    ['no name', ['admin-tokens', 'create', '--scope', 'audit:read'], 2],
    ['revoking an id that does not exist', ['admin-tokens', 'revoke', '--id', 'no-such-token'], 3],
  ])('%s exits %i with one line on stderr', async (_what, args, code) => {
    const refused = await tessera(args).then(
      () => undefined,
      (error: unknown) => error as { code: number; stderr: string; stdout: string },
    );
    expect(refused?.code).toBe(code);
    expect(refused?.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused?.stdout).toBe('');
  });
});
