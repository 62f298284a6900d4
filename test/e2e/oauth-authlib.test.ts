import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Authlib (PyPI), a Python OAuth 2.0 client nobody here wrote, against `tessera start`:
 * OAuth2Session's client_credentials, refresh, introspect_token and revoke_token with each client
 * authentication method. Skips loudly without python3, authlib and requests; .ci/run installs them.
 */
const script = resolve(import.meta.dirname, 'authlib', 'oauth_session.py');
const authlib = spawnSync('python3', ['-c', 'import authlib, requests'], { stdio: 'ignore' }).status === 0;
if (!authlib) console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING Authlib e2e: python3 with "authlib" and "requests" is not installed (pip install authlib requests). The OAuth endpoints are NOT tried by a Python client in this run.\n${'!'.repeat(78)}\n`);

interface SessionRun {
  readonly issuer: string;
  readonly issued: { readonly token_type: string; readonly scope: string; readonly has_refresh_token: boolean };
  readonly first_access_token: string;
  readonly refreshed_access_token: string;
  readonly introspected: Record<string, unknown>;
  readonly revoke_status: number;
  readonly after_revoke: Record<string, unknown>;
}

describe.skipIf(!authlib)('Authlib OAuth2Session against the OAuth 2.0 endpoints', () => {
  let tessera: TesseraProcess;
  let shop: Credentials;
  let issuer: string;
  beforeAll(async () => {
    tessera = await startTessera();
    shop = await tessera.createAccount({ name: 'Python shop', permissions: ['transaction:charge', 'transaction:refund'] });
    // The default issuer names TESSERA_HOST (127.0.0.1 here) and the bound port.
    issuer = `https://127.0.0.1:${new URL(tessera.baseUrl).port}`;
  });
  afterAll(async () => {
    await tessera?.stop();
  });

  const run = (method: string): SessionRun => {
    const session = spawnSync('python3', [script, issuer, join(tessera.dataDir, 'tls', 'self-signed.crt'), method], {
      input: `${shop.api_login_id}\n${shop.transaction_key}\n`,
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (session.status !== 0 || session.stdout.trim() === '') throw new Error(`oauth_session.py failed (exit ${session.status}): ${session.stderr}`);
    return JSON.parse(session.stdout) as SessionRun;
  };
  const charge = (accessToken: string) => tessera.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${accessToken}` });

  for (const method of ['client_secret_basic', 'client_secret_post']) {
    it(`${method}: fetch_token, refresh_token, introspect_token and revoke_token, and the verifier follows each`, async () => {
      const session = run(method);
      expect(session.issuer).toBe(issuer);
      expect(session.issued).toEqual({ token_type: 'Bearer', scope: 'transaction:charge', has_refresh_token: true });
      expect(session.introspected).toMatchObject({ active: true, client_id: shop.api_login_id, scope: 'transaction:charge', token_type: 'Bearer' });
      expect(session.revoke_status).toBe(200);
      expect(session.after_revoke).toEqual({ active: false });
      // The refresh replaced the first access token; the revocation ended the second.
      expect((await charge(session.first_access_token)).status).toBe(401);
      expect((await charge(session.refreshed_access_token)).status).toBe(401);
    });
  }
});
