import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * A Python service verifying Tessera's access tokens with PyJWT and the public JWKS, with no
 * Tessera code at all (docs/interface.md: issuer, audiences, claims). Skips loudly without
 * python3 and PyJWT with its crypto extra; .ci/run installs them.
 */
const script = resolve(import.meta.dirname, 'pyjwt', 'verify_token.py');
const pyjwt = spawnSync('python3', ['-c', 'import jwt, cryptography'], { stdio: 'ignore' }).status === 0;
if (!pyjwt) console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING PyJWT e2e: python3 with "pyjwt[crypto]" is not installed (pip install "pyjwt[crypto]"). Tokens are NOT checked by a non-JS verifier in this run.\n${'!'.repeat(78)}\n`);

interface Verified {
  readonly header?: Record<string, unknown>;
  readonly claims?: Record<string, unknown>;
  readonly error?: string;
}

describe.skipIf(!pyjwt)('access tokens verified by PyJWT with the JWKS', () => {
  let tessera: TesseraProcess;
  let account: Credentials;
  beforeAll(async () => {
    tessera = await startTessera();
    account = await tessera.createAccount({ legacy: true });
  });
  afterAll(async () => {
    await tessera?.stop();
  });

  const verify = (token: string, audience: string): Verified => {
    const run = spawnSync('python3', [script, `${tessera.baseUrl}/.well-known/jwks.json`, join(tessera.dataDir, 'tls', 'self-signed.crt'), 'urn:tessera:issuer', audience], {
      input: token,
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (run.stdout.trim() === '') throw new Error(`verify_token.py printed nothing (exit ${run.status}): ${run.stderr}`);
    return JSON.parse(run.stdout) as Verified;
  };
  const v5Token = async () => {
    const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(answer.status).toBe(200);
    return JSON.parse(answer.text) as { token: string; refresh_token: string };
  };

  it('verifies a v5 token: at+jwt with the JWKS key of its kid, and every claim docs/interface.md lists', async () => {
    const { token } = await v5Token();
    const verified = verify(token, 'tessera:v5');
    expect(verified.error).toBeUndefined();
    expect(verified.header).toMatchObject({ typ: 'at+jwt' });
    expect(typeof verified.header!.kid).toBe('string');
    expect(Object.keys(verified.claims!).sort()).toEqual(['aud', 'client_id', 'exp', 'fid', 'gen', 'iat', 'iss', 'jti', 'scope', 'sub'].sort());
    expect(verified.claims).toMatchObject({ iss: 'urn:tessera:issuer', aud: 'tessera:v5', client_id: account.api_login_id, sub: account.account_id, gen: 0 });
  });

  it('verifies a v1 token with its own audience, and refuses it for v5', async () => {
    const answer = await tessera.request('/v1/authenticate', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ apiid: account.apiid!, apikey: account.apikey! }).toString(),
      legacy: true,
    });
    expect(answer.status).toBe(200);
    const token = (JSON.parse(answer.text) as { result: { authentication_token: string } }).result.authentication_token;
    expect(verify(token, 'tessera:v1').error).toBeUndefined();
    expect(verify(token, 'tessera:v5').error).toBe('InvalidAudienceError');
  });

  it('refuses a token whose claims were altered after signing', async () => {
    const { token } = await v5Token();
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const altered = Buffer.from(JSON.stringify({ ...claims, scope: 'transaction:charge transaction:refund' })).toString('base64url');
    expect(verify(`${header}.${altered}.${signature}`, 'tessera:v5').error).toBe('InvalidSignatureError');
  });
});
