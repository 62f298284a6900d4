import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * golang.org/x/oauth2/clientcredentials (from the Go module proxy), the Go client nobody here
 * wrote, against `tessera start`: a token source against the token endpoint named in the RFC 8414
 * metadata, with the secret in the header and in the body. Skips loudly without Go; .ci/run has it.
 */
const program = resolve(import.meta.dirname, 'go-oauth2');
const go = spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0;
if (!go) console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING the golang.org/x/oauth2 e2e: no Go toolchain on PATH. The OAuth endpoints are NOT tried by a Go client in this run.\n${'!'.repeat(78)}\n`);

interface TokenSourceRun {
  readonly issuer: string;
  readonly access_token: string;
  readonly token_type: string;
  readonly scope: string;
  readonly expires_in_s: number;
  readonly same_token: boolean;
  readonly wrong_secret: string;
}

describe.skipIf(!go)('golang.org/x/oauth2/clientcredentials against the token endpoint', () => {
  let tessera: TesseraProcess;
  let shop: Credentials;
  let issuer: string;
  beforeAll(async () => {
    tessera = await startTessera();
    shop = await tessera.createAccount({ name: 'Go shop', permissions: ['transaction:charge', 'transaction:refund'] });
    issuer = `https://127.0.0.1:${new URL(tessera.baseUrl).port}`;
    // Compiled once before the runs, so the first test does not pay for the build in its timeout.
    const build = spawnSync('go', ['build', '-o', join(tessera.dataDir, 'go-oauth2'), '.'], { cwd: program, encoding: 'utf8', timeout: 240_000 });
    if (build.status !== 0) throw new Error(`go build failed: ${build.stderr}`);
  }, 300_000);
  afterAll(async () => {
    await tessera?.stop();
  });

  for (const [style, method] of [
    ['header', 'client_secret_basic'],
    ['params', 'client_secret_post'],
  ] as const) {
    it(`${method}: a token source gets a Bearer token the verifier accepts, and reuses it while valid; a wrong secret is 401 invalid_client`, async () => {
      const run = spawnSync(join(tessera.dataDir, 'go-oauth2'), [issuer, join(tessera.dataDir, 'tls', 'self-signed.crt'), style], {
        input: `${shop.api_login_id}\n${shop.transaction_key}\n`,
        encoding: 'utf8',
        timeout: 60_000,
      });
      if (run.status !== 0) throw new Error(`the Go client failed (exit ${run.status}): ${run.stderr}`);
      const source = JSON.parse(run.stdout) as TokenSourceRun;
      expect(source).toMatchObject({ issuer, token_type: 'Bearer', scope: 'transaction:charge', same_token: true, wrong_secret: '401 invalid_client' });
      expect(source.expires_in_s).toBeGreaterThan(800);
      const charged = await tessera.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${source.access_token}` });
      expect(charged.status).toBe(200);
    });
  }
});
