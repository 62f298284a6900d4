import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * The Go verification module (sdk/go) against `tessera start`: its example downstream service
 * protects GET /orders with Tessera's access tokens (keys from the JWKS) and hears revocations by
 * polling a Shared Signals stream it creates with a receiver token made by the CLI. A revocation
 * at Tessera, or a refresh that replaces the token, must turn the service's 200 into a 401 within a second. The module's own `go test`
 * (the shared verification vectors among them) runs here too. Skips loudly without Go.
 */
const sdkFolder = resolve(import.meta.dirname, '..', '..', 'sdk', 'go');
const run = promisify(execFile);
const go = spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0;
if (!go) console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING the Go verification module e2e: no Go toolchain on PATH. sdk/go is NOT built or tested in this run.\n${'!'.repeat(78)}\n`);

describe.skipIf(!go)('the Go verification module in a downstream service, revocations by Shared Signals polling', () => {
  let tessera: TesseraProcess;
  let shop: Credentials;
  let downstream: ChildProcess | undefined;
  let downstreamUrl = '';
  let streamId = '';
  let output = '';

  beforeAll(async () => {
    tessera = await startTessera();
    shop = await tessera.createAccount({ name: 'Go downstream shop', permissions: ['transaction:charge'] });
    const program = join(tessera.dataDir, 'go-downstream');
    // Compiled before anything is timed: on a busy two-core machine a cold build takes minutes.
    await run('go', ['build', '-o', program, './examples/downstream'], { cwd: sdkFolder, timeout: 420_000 });
    // The receiver token goes to the program on its standard input, never on a command line or in a log.
    const receiverToken = (JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'Go downstream', '--json'])).stdout) as { token: string }).token;
    const tesseraUrl = `https://127.0.0.1:${new URL(tessera.baseUrl).port}`;
    downstream = spawn(program, ['-tessera', tesseraUrl, '-ca', join(tessera.dataDir, 'tls', 'self-signed.crt'), '-accounts', shop.account_id, '-permission', 'transaction:charge'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    downstream.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    downstream.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    downstream.stdin!.end(`${receiverToken}\n`);
    const listening = await until(() => /"listening":"([^"]+)"/.exec(output)?.[1], `the Go service to listen (its output: ${output})`, { timeoutMs: 30_000 });
    // until() returns only a truthy answer; the check narrows the type.
    if (listening.answer === undefined) throw new Error('unreachable: until() returned no address');
    downstreamUrl = listening.answer;
    // The stream exists with the account as its subject: a revocation from now on reaches it.
    const ready = await until(() => /"ssf_ready":"([^"]+)"/.exec(output)?.[1], 'the Go service\'s Shared Signals stream', { timeoutMs: 30_000 });
    if (ready.answer === undefined) throw new Error('unreachable: until() returned no stream id');
    streamId = ready.answer;
  }, 540_000);
  afterAll(async () => {
    downstream?.kill('SIGTERM');
    await tessera?.stop();
  });

  const orders = (authorization?: string) => fetch(`${downstreamUrl}/orders`, { headers: authorization === undefined ? {} : { authorization } });

  it('takes a token, refuses one without the permission, and refuses a revoked one within a second', async () => {
    expect((await orders()).headers.get('www-authenticate')).toBe('Bearer, DPoP algs="ES256 RS256 PS256 EdDSA"');
    const pair = (await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: shop.api_login_id, transaction_key: shop.transaction_key })).json() as {
      token: string;
      refresh_token: string;
    };
    const accepted = await orders(`Bearer ${pair.token}`);
    // The body with the status: a refusal's problem document names which check failed.
    expect({ status: accepted.status, body: (await accepted.json()) as unknown }).toEqual({ status: 200, body: { account: shop.account_id, orders: 'none yet' } });

    const refunds = await tessera.createAccount({ name: 'refunds only', permissions: ['transaction:refund'] });
    const refundToken = ((await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: refunds.api_login_id, transaction_key: refunds.transaction_key })).json() as { token: string }).token;
    const forbidden = await orders(`Bearer ${refundToken}`);
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="transaction:charge"');

    // Timed from before the revocation is asked for: the figure includes Tessera's own answer.
    const revokeSentAt = performance.now();
    const revoked = await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token });
    expect(revoked.status).toBe(200);
    const revokeAnsweredMs = performance.now() - revokeSentAt;
    const refused = await until(async () => (await orders(`Bearer ${pair.token}`)).status, 'the Go service to refuse the revoked token', { done: (status) => status === 401, everyMs: 10, timeoutMs: 10_000 });
    const latencyMs = performance.now() - revokeSentAt;
    console.log(`Go downstream: revoke-oauth-token sent → 401 at the Go service after ${latencyMs.toFixed(0)} ms (Tessera answered the revocation after ${revokeAnsweredMs.toFixed(0)} ms; the SET came by a Shared Signals poll)`);
    const answer = await orders(`Bearer ${pair.token}`);
    expect(answer.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(((await answer.json()) as { detail: string }).detail).toBe('the access token was revoked or replaced by a refresh');
    expect(refused.answer).toBe(401);
    expect(latencyMs).toBeLessThan(1_000);
    // The service acknowledged the SET in its next poll: Tessera counts it delivered on that stream.
    await until(async () => (await tessera.adminRequest('/metrics')).text, 'Tessera to count the SET delivered to the Go service', {
      done: (metrics) => new RegExp(`^tessera_ssf_delivered_total\\{stream_id="${streamId}"\\} [1-9]`, 'm').test(metrics),
    });
  });

  it('refuses an access token replaced by a refresh within a second (token-rotated), and takes its successor', async () => {
    const pair = (await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: shop.api_login_id, transaction_key: shop.transaction_key })).json() as {
      token: string;
      refresh_token: string;
    };
    expect((await orders(`Bearer ${pair.token}`)).status).toBe(200);
    const refreshSentAt = performance.now();
    const refreshed = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pair.refresh_token });
    expect(refreshed.status).toBe(200);
    await until(async () => (await orders(`Bearer ${pair.token}`)).status, 'the Go service to refuse the rotated-away token', { done: (status) => status === 401, everyMs: 10, timeoutMs: 10_000 });
    const latencyMs = performance.now() - refreshSentAt;
    console.log(`Go downstream: refresh-oauth-token sent → 401 for the previous access token after ${latencyMs.toFixed(0)} ms (token-rotated SET)`);
    expect(latencyMs).toBeLessThan(1_000);
    const successor = (refreshed.json() as { token: string }).token;
    expect((await orders(`Bearer ${successor}`)).status).toBe(200);
  });

  it('go test ./... of the module passes (unit tests and every case of the shared vectors)', async () => {
    const tested = await run('go', ['test', '-count=1', './...'], { cwd: sdkFolder, timeout: 420_000 });
    expect(tested.stdout).toMatch(/^ok\s+github\.com\/tessera-auth\/tessera\/sdk\/go\/verification\s/m);
  }, 480_000);
});
