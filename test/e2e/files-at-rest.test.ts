import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/** What `tessera start` leaves on disk is readable by its own user only. */
let parent: string;
let tessera: TesseraProcess;
beforeAll(async () => {
  parent = mkdtempSync(join(tmpdir(), 'tessera-e2e-modes-'));
  // As an older release, or `mkdir` with the usual umask, left it.
  const dataDir = join(parent, 'data');
  mkdirSync(dataDir);
  chmodSync(dataDir, 0o755);
  tessera = await startTessera({}, { dataDir });
});
afterAll(async () => {
  await tessera?.stop();
  if (parent) rmSync(parent, { recursive: true, force: true });
});

// Octal text, so a failure reads '644', not 420.
const mode = (name: string) => (statSync(join(tessera.dataDir, name)).mode & 0o777).toString(8);

describe('files at rest after tessera start', () => {
  it('the data folder is 0700; events.db, its WAL, the audit index, the key files and the TLS key are 0600', async () => {
    const account = await tessera.createAccount();
    const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(answer.status).toBe(200);
    // The audit index opens on a thread of its own, which need not have made its file when the
    // server answers its first request.
    await until(() => ['audit-index.db', 'audit-index.db-wal'].every((name) => existsSync(join(tessera.dataDir, name))), 'the audit index\'s files');
    expect(mode('.')).toBe('700');
    expect(mode('keys')).toBe('700');
    expect(mode('tls')).toBe('700');
    const signingKeys = readdirSync(join(tessera.dataDir, 'keys')).filter((name) => name.endsWith('.jwk.json'));
    expect(signingKeys).toHaveLength(1);
    for (const name of ['events.db', 'events.db-wal', 'audit-index.db', 'audit-index.db-wal', 'keys/secret-hashing.key', `keys/${signingKeys[0]}`, 'tls/self-signed.key']) {
      expect([name, mode(name)]).toEqual([name, '600']);
    }
  });
});
