import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * The Python verification library (sdk/python), installed from its built wheel into a fresh venv,
 * in a downstream service (python-verification/downstream.py: http.server, a route per permission,
 * Shared Signals by poll, and in a second one by push) against `tessera start`. The receiver token
 * comes from the CLI. Also runs
 * the library's unittest suite, the shared verification vectors included, against the installed
 * wheel. Skips loudly without python3 and PyJWT with its crypto extra; .ci/run installs them.
 */
const repository = resolve(import.meta.dirname, '..', '..');
const sdkFolder = join(repository, 'sdk', 'python');
const downstreamScript = resolve(import.meta.dirname, 'python-verification', 'downstream.py');
const pyjwt = spawnSync('python3', ['-c', 'import jwt, cryptography'], { stdio: 'ignore' }).status === 0;
if (!pyjwt) console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING Python verification e2e: python3 with "pyjwt[crypto]" is not installed (pip install "pyjwt[crypto]"). The Python SDK is NOT tried against Tessera in this run.\n${'!'.repeat(78)}\n`);

interface DownstreamAnswer {
  readonly status: number;
  readonly wwwAuthenticate: string | undefined;
  readonly body: string;
}

/** A downstream.py process, once it serves: its port, and what it wrote to stderr so far. */
interface Downstream {
  readonly child: ChildProcess;
  readonly port: number;
  readonly output: () => string;
}

describe.skipIf(!pyjwt)('the Python verification library in a downstream service, revocations by Shared Signals', () => {
  let work = '';
  let python = '';
  let tessera: TesseraProcess;
  let account: Credentials;
  let transmitter = '';
  const children: ChildProcess[] = [];
  const downstreams: Downstream[] = [];
  let downstream: Downstream;
  let receiverToken = '';
  const downstreamOutput = () => downstreams.map((started) => started.output()).join('\n');

  /** Starts downstream.py with these arguments and its secret on stdin; resolves once it serves. */
  async function startDownstream(args: string[], secret: string): Promise<Downstream> {
    const child = spawn(python, [downstreamScript, '--tessera', transmitter, '--ca', join(tessera.dataDir, 'tls', 'self-signed.crt'), '--issuer', 'urn:tessera:issuer', '--issuer', transmitter, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      cwd: work,
    });
    children.push(child);
    child.stdin!.end(`${secret}\n`);
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const port = await new Promise<number>((resolvePort, reject) => {
      let line = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        line += chunk.toString();
        if (line.includes('\n')) resolvePort((JSON.parse(line.split('\n')[0]!) as { port: number }).port);
      });
      child.once('exit', (code) => reject(new Error(`downstream.py exited (${code}): ${output}`)));
    });
    const started = { child, port, output: () => output };
    downstreams.push(started);
    return started;
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tessera-python-verification-'));
    // Built and installed as a user would: pip wheel, then a venv of its own (the system's
    // site-packages only for PyJWT and cryptography, so that no index is needed to install).
    const wheels = join(work, 'wheels');
    const built = spawnSync('python3', ['-m', 'pip', 'wheel', '--no-deps', '--quiet', '-w', wheels, sdkFolder], { encoding: 'utf8', timeout: 180_000 });
    if (built.status !== 0) throw new Error(`pip wheel failed: ${built.stderr}`);
    const wheel = readdirSync(wheels).find((name) => name.startsWith('tessera_verification-') && name.endsWith('.whl'));
    if (wheel === undefined) throw new Error(`no tessera_verification wheel in ${readdirSync(wheels).join(', ')}`);
    const venv = join(work, 'venv');
    expect(spawnSync('python3', ['-m', 'venv', '--system-site-packages', venv], { encoding: 'utf8', timeout: 120_000 }).status).toBe(0);
    python = join(venv, 'bin', 'python');
    const installed = spawnSync(python, ['-m', 'pip', 'install', '--no-deps', '--no-index', '--quiet', join(wheels, wheel)], { encoding: 'utf8', timeout: 120_000 });
    if (installed.status !== 0) throw new Error(`pip install of the wheel failed: ${installed.stderr}`);

    // Pushes go to the push downstream on this machine: loopback, over http, only because this names it.
    tessera = await startTessera({ TESSERA_EGRESS_ALLOW: '127.0.0.1' });
    account = await tessera.createAccount({ name: 'Python downstream shop' });
    receiverToken = (JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'Python downstream', '--json'])).stdout) as { token: string }).token;
    transmitter = ((await tessera.request('/.well-known/ssf-configuration')).json() as { issuer: string }).issuer;
    // The receiver token is accepted within a second of its creation (docs/shared-signals.md).
    await until(async () => (await tessera.request('/ssf/streams', { headers: { authorization: `Bearer ${receiverToken}` } })).status === 200, 'the receiver token to be accepted');
    downstream = await startDownstream(['--account', account.account_id], receiverToken);
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await tessera?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const get = (path: string, authorization?: string, port = downstream.port) =>
    new Promise<DownstreamAnswer>((resolveAnswer, reject) => {
      const outgoing = request({ host: '127.0.0.1', port, path, headers: authorization === undefined ? {} : { authorization }, agent: false }, (incoming) => {
        let body = '';
        incoming.on('data', (chunk: Buffer) => (body += chunk.toString()));
        incoming.on('end', () => resolveAnswer({ status: incoming.statusCode ?? 0, wwwAuthenticate: incoming.headers['www-authenticate'], body }));
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  const tokenPair = async () => {
    const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(answer.status).toBe(200);
    return answer.json() as { token: string; refresh_token: string };
  };

  it('takes a fresh token (200), refuses a missing one (401) and a missing permission (403 insufficient_scope)', async () => {
    const { token } = await tokenPair();
    const taken = await get('/charges', `Bearer ${token}`);
    expect(taken.status).toBe(200);
    expect(JSON.parse(taken.body)).toEqual({ account: account.account_id, client_id: account.api_login_id });
    const missing = await get('/charges');
    expect(missing.status).toBe(401);
    expect(missing.wwwAuthenticate).toMatch(/^Bearer, DPoP algs=/);
    const forbidden = await get('/refunds', `Bearer ${token}`);
    expect(forbidden.status).toBe(403);
    expect(forbidden.wwwAuthenticate).toBe('Bearer error="insufficient_scope", scope="transaction:refund"');
    const altered = await get('/charges', `Bearer ${token.slice(0, -2)}${token.endsWith('AA') ? 'BA' : 'AA'}`);
    expect(altered.status).toBe(401);
    expect(altered.wwwAuthenticate).toBe('Bearer error="invalid_token"');
  });

  /** Asks the downstream with `token` until it refuses it; the milliseconds from `since` to the 401, which must be for a revocation. */
  async function refusedAfter(token: string, since: number, port = downstream.port): Promise<number> {
    let refused: DownstreamAnswer | undefined;
    while (performance.now() - since < 5_000) {
      const answer = await get('/charges', `Bearer ${token}`, port);
      if (answer.status === 401) {
        refused = answer;
        break;
      }
      expect(answer.status).toBe(200);
      await new Promise((wake) => setTimeout(wake, 10));
    }
    const latencyMs = performance.now() - since;
    expect(refused, `still taken after 5 s; the downstreams logged: ${downstreamOutput()}`).toBeDefined();
    expect(refused?.wwwAuthenticate).toBe('Bearer error="invalid_token"');
    expect(JSON.parse(refused!.body)).toMatchObject({ status: 401, detail: 'the access token was revoked or replaced by a refresh' });
    return latencyMs;
  }

  it('refuses a token within a second of its revocation at Tessera, told by a SET it polled', async () => {
    const { token, refresh_token: refreshToken } = await tokenPair();
    const other = await tokenPair();
    expect((await get('/charges', `Bearer ${token}`)).status).toBe(200);

    expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: refreshToken })).status).toBe(200);
    const latencyMs = await refusedAfter(token, performance.now());
    console.log(`Python downstream: revoke-oauth-token → refused 401 after ${latencyMs.toFixed(0)} ms (Shared Signals poll)`);
    expect(latencyMs).toBeLessThan(1_000);
    // Only that family: another token of the same account is still taken.
    expect((await get('/charges', `Bearer ${other.token}`)).status).toBe(200);
    // No secret in what the downstream logged.
    expect(downstreamOutput()).not.toContain(receiverToken);
    expect(downstreamOutput()).not.toContain(token);
  });

  it('refuses the access token a refresh replaced (token-rotated SET), and takes the new one', async () => {
    const { token, refresh_token: refreshToken } = await tokenPair();
    expect((await get('/charges', `Bearer ${token}`)).status).toBe(200);
    const refreshed = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: refreshToken });
    expect(refreshed.status).toBe(200);
    const latencyMs = await refusedAfter(token, performance.now());
    console.log(`Python downstream: refresh-oauth-token → old access token refused 401 after ${latencyMs.toFixed(0)} ms`);
    expect(latencyMs).toBeLessThan(1_000);
    expect((await get('/charges', `Bearer ${(refreshed.json() as { token: string }).token}`)).status).toBe(200);
  });

  it('refuses every token of the account issued before an operator cut, and takes one issued after it', async () => {
    const first = await tokenPair();
    const second = await tokenPair();
    await tessera.tessera(['accounts', 'set-permissions', '--account', account.account_id, '--permission', 'transaction:charge', '--revoke-tokens']);
    const cutAt = performance.now();
    const latencyMs = await refusedAfter(first.token, cutAt);
    console.log(`Python downstream: account cut (set-permissions --revoke-tokens) → refused 401 after ${latencyMs.toFixed(0)} ms`);
    expect(latencyMs).toBeLessThan(1_000);
    expect((await get('/charges', `Bearer ${second.token}`)).status).toBe(401);
    expect((await get('/charges', `Bearer ${(await tokenPair()).token}`)).status).toBe(200);
  });

  it('push: a second downstream takes SETs pushed to its own endpoint and refuses a revoked token within a second', async () => {
    const pushAuthorization = `Bearer ${randomBytes(24).toString('base64url')}`;
    const pushed = await startDownstream(['--push'], pushAuthorization);
    const endpoint = `http://127.0.0.1:${pushed.port}/ssf/events`;
    const streams = (method: string, path: string, body: unknown) =>
      tessera.request(path, { method, headers: { authorization: `Bearer ${receiverToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const created = await streams('POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: endpoint, authorization_header: pushAuthorization } });
    expect(created.status).toBe(201);
    const { stream_id: streamId, aud } = created.json() as { stream_id: string; aud: string };
    expect(aud).toBe(endpoint);
    expect((await streams('POST', '/ssf/subjects/add', { stream_id: streamId, subject: { format: 'iss_sub', iss: transmitter, sub: account.account_id } })).status).toBe(200);

    const { token, refresh_token: refreshToken } = await tokenPair();
    expect((await get('/charges', `Bearer ${token}`, pushed.port)).status).toBe(200);
    expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: refreshToken })).status).toBe(200);
    const latencyMs = await refusedAfter(token, performance.now(), pushed.port);
    console.log(`Python downstream: revoke-oauth-token → refused 401 after ${latencyMs.toFixed(0)} ms (Shared Signals push)`);
    expect(latencyMs).toBeLessThan(1_000);
    expect(pushed.output()).not.toContain(pushAuthorization);
  });

  it('refuses the tokens of a credential cut (rotate-key --revoke-tokens): the last test that gets tokens, the key changes', async () => {
    const { token } = await tokenPair();
    expect((await get('/charges', `Bearer ${token}`)).status).toBe(200);
    // After the account cut above, a token got in that same second is dated a second ahead (at the
    // cut's notBefore), and a cut made in that second too would not refuse it, here or at Tessera
    // (notBefore = that same second + 1). The cut is made once the token's iat has passed.
    const { iat } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { iat: number };
    while (Math.floor(Date.now() / 1000) <= iat) await new Promise((wake) => setTimeout(wake, 50));
    await tessera.tessera(['accounts', 'rotate-key', '--api-login-id', account.api_login_id, '--revoke-tokens', '--json']);
    const latencyMs = await refusedAfter(token, performance.now());
    console.log(`Python downstream: credential cut (rotate-key --revoke-tokens) → refused 401 after ${latencyMs.toFixed(0)} ms`);
    expect(latencyMs).toBeLessThan(1_000);
  });

  it('passes its unittest suite, the shared verification vectors included, as installed from the wheel', () => {
    const run = spawnSync(python, ['-m', 'unittest', 'discover', '-s', join(sdkFolder, 'tests'), '-p', 'test_*.py', '-v'], {
      encoding: 'utf8',
      timeout: 120_000,
      cwd: work,
      env: { ...process.env, TESSERA_VERIFICATION_INSTALLED: '1' },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/test_every_case \(test_vectors\.SharedVectors/);
    expect(run.stderr).toMatch(/\nOK/);
  });
});
