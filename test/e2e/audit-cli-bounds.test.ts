import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streams, type TesseraEvent } from '@tessera/events';
import { revocations, writeBulkLog, type BulkEntry } from '@tessera/event-store-sqlite/testing';

/**
 * `tessera audit` on a long log, as an operator runs it: the time budget (TESSERA_AUDIT_QUERY_BUDGET_MS)
 * bounds its queries as it bounds the admin API's, and access-at pages like the events query.
 */
const T = Math.floor(Date.parse('2026-11-01T00:00:00Z') / 1000);
const hash = 'H'.repeat(43);
const cli = resolve(import.meta.dirname, '..', '..', 'services', 'cli', 'bin', 'tessera.js');
let dataDir: string;
const runCli = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH ?? '', TESSERA_DATA_DIR: dataDir, ...env } }, (error, stdout, stderr) =>
      done({ code: error ? Number((error as { code?: unknown }).code) : 0, stdout, stderr }),
    );
  });

function issued(familyId: string, issuedAt: number): BulkEntry {
  const event: TesseraEvent = {
    type: 'TokenIssued', v: 1, familyId, accountId: 'acct-big', credentialId: 'cred-big', apiLoginId: 'tsl_big', generation: 0,
    refreshTokenHash: hash, jti: `jti-${familyId}`, scope: [], issuedAt, accessExpiresAt: issuedAt + 3600, refreshExpiresAt: issuedAt + 86_400,
  };
  return { stream: streams.family(familyId), event, recordedAt: issuedAt * 1000 };
}
function* history(): Generator<BulkEntry> {
  yield { stream: streams.account('acct-big'), event: { type: 'AccountRegistered', v: 1, accountId: 'acct-big', name: 'Big', permissions: [], at: T - 40 * 86_400 }, recordedAt: (T - 40 * 86_400) * 1000 };
  for (let i = 0; i < 60_000; i += 1) yield issued(`dead-${i}`, T - 30 * 86_400 + Math.floor(i / 10));
  for (let i = 0; i < 150; i += 1) yield issued(`live-${i}`, T - 3000 + i);
  yield* revocations(60_000, (T - 86_400) * 1000);
}

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-e2e-audit-bounds-'));
  writeBulkLog(join(dataDir, 'events.db'), history());
});
afterAll(() => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('tessera audit on a long log', () => {
  it('a query that visits 60,000 rows is stopped at TESSERA_AUDIT_QUERY_BUDGET_MS: exit 4, saying so and how to narrow it', async () => {
    const over = await runCli(['audit', '--account', 'acct-big', '--type', 'TokenRevoked'], { TESSERA_AUDIT_QUERY_BUDGET_MS: '10' });
    expect(over.code).toBe(4);
    expect(over.stdout).toBe('');
    expect(over.stderr).toMatch(/time budget of 10 ms \(TESSERA_AUDIT_QUERY_BUDGET_MS\): narrow it/);
    // The same query within the default budget (2 s) answers: nothing matches.
    const within = await runCli(['audit', '--account', 'acct-big', '--type', 'TokenRevoked', '--json']);
    expect(within).toMatchObject({ code: 0, stdout: '[]\n' });
  }, 120_000);

  it('access-at pages with --limit and the --cursor it prints, every usable token once', async () => {
    const at = new Date(T * 1000).toISOString();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await runCli(['audit', 'access-at', '--account', 'acct-big', '--at', at, '--limit', '100', '--json', ...(cursor ? ['--cursor', cursor] : [])]);
      expect(page.code).toBe(0);
      const body = JSON.parse(page.stdout) as { families: { family_id: string }[]; next_cursor: string | null };
      seen.push(...body.families.map((family) => family.family_id));
      cursor = body.next_cursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(2);
    expect(new Set(seen).size).toBe(150);
    const tooMany = await runCli(['audit', 'access-at', '--account', 'acct-big', '--at', at, '--limit', '1001']);
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toMatch(/--limit/);
  }, 120_000);
});
