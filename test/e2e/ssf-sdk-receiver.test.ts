import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * @tessera/verification's Shared Signals receiver end to end: Tessera runs as `tessera start`, the
 * receiver token comes from its CLI, and a downstream fastify service (ssf-sdk-receiver/downstream.mjs,
 * plain JavaScript on the built package, its own process) verifies Tessera's access tokens with the
 * revocations it hears by polling (RFC 8936) or by push to its own route (RFC 8935, over http to
 * 127.0.0.1, which TESSERA_EGRESS_ALLOW names). What is measured is printed at the end.
 */
const downstreamScript = resolve(import.meta.dirname, 'ssf-sdk-receiver', 'downstream.mjs');
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const TOKEN_ROTATED = 'urn:tessera:secevent:token-rotated';

interface Downstream {
  readonly url: string;
  readonly output: () => string;
  readonly ready: { streamId: string; readyMs: number };
  stop(): Promise<void>;
}

interface Pair {
  readonly token: string;
  readonly refresh_token: string;
}

describe('a downstream service fed by the Shared Signals receiver of @tessera/verification', () => {
  let work = '';
  let tessera: TesseraProcess;
  let account: Credentials;
  let receiverToken = '';
  const children: ChildProcess[] = [];
  const timings: string[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tessera-ssf-sdk-e2e-'));
    const port = await freePort();
    // The pushed downstream listens on this machine's loopback over http: the egress policy refuses both unless the host is named.
    tessera = await startTessera({ TESSERA_PORT: String(port), TESSERA_PUBLIC_URL: `https://localhost:${port}`, TESSERA_EGRESS_ALLOW: '127.0.0.1' });
    account = await tessera.createAccount();
    receiverToken = (JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'downstream orders', '--json'])).stdout) as { token: string }).token;
    // The server follows the log: the new receiver token is taken within a second.
    await until(async () => (await tessera.request('/ssf/streams', { headers: { authorization: `Bearer ${receiverToken}` } })).status === 200, 'the receiver token to be accepted');
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await tessera?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
    console.log(`\nShared Signals receiver, measured:\n${timings.map((line) => `  ${line}`).join('\n')}\n`);
  });

  async function startDownstream(mode: 'poll' | 'push', port: number, stateFile: string): Promise<Downstream> {
    const child = spawn(process.execPath, [downstreamScript], {
      cwd: repositoryRoot,
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        NODE_EXTRA_CA_CERTS: join(tessera.dataDir, 'tls', 'self-signed.crt'),
        TRANSMITTER_URL: tessera.baseUrl,
        RECEIVER_TOKEN: receiverToken,
        MODE: mode,
        PORT: String(port),
        ACCOUNT_ID: account.account_id,
        STATE_FILE: stateFile,
        PUSH_SECRET: `push-secret-${mode}-${process.pid}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
    await until(() => output.includes('"ready":true') || child.exitCode !== null, `the ${mode} downstream to be ready`, { timeoutMs: 30_000 });
    expect(child.exitCode, output).toBeNull();
    const readyLine = output.split('\n').find((line) => line.includes('"ready":true'))!;
    return {
      url: `http://127.0.0.1:${port}`,
      output: () => output,
      ready: JSON.parse(readyLine) as { streamId: string; readyMs: number },
      async stop() {
        child.kill('SIGTERM');
        await exited;
      },
    };
  }

  const newPair = async (): Promise<Pair> => {
    const answer = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(answer.status).toBe(200);
    return answer.json() as unknown as Pair;
  };
  const ordersStatus = async (downstream: Downstream, token: string) => (await fetch(`${downstream.url}/orders`, { headers: { authorization: `Bearer ${token}` } })).status;

  /** The time from Tessera's answer to the first 401 downstream, asked every 10 ms. */
  async function refusedWithin(downstream: Downstream, token: string, what: string): Promise<number> {
    const { elapsedMs } = await until(() => ordersStatus(downstream, token), what, { done: (status) => status === 401, everyMs: 10, timeoutMs: 5_000 });
    return elapsedMs;
  }

  describe.each(['poll', 'push'] as const)('%s delivery', (mode) => {
    let downstream: Downstream;
    let port = 0;
    let stateFile = '';
    let revoked: Pair;

    beforeAll(async () => {
      port = await freePort();
      stateFile = join(work, `ssf-${mode}.jsonl`);
      downstream = await startDownstream(mode, port, stateFile);
      timings.push(`${mode}: ready (stream made, subject added, verified, caught up) ${downstream.ready.readyMs} ms after the process started`);
    });
    afterAll(async () => downstream?.stop());

    it('takes a token (200), and refuses it (401) within 1 s of its revocation at Tessera', async () => {
      revoked = await newPair();
      expect(await ordersStatus(downstream, revoked.token)).toBe(200);
      expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: revoked.refresh_token })).status).toBe(200);
      const elapsedMs = await refusedWithin(downstream, revoked.token, `the revoked token refused by the ${mode} downstream`);
      timings.push(`${mode}: revoke answered → refused downstream in ${elapsedMs.toFixed(0)} ms`);
      expect(elapsedMs).toBeLessThan(1_000);
      // Only that family: a token of another family of the same account is still taken.
      expect(await ordersStatus(downstream, (await newPair()).token)).toBe(200);
    });

    it('refuses the access token a refresh replaced (the token-rotated SET), and takes the new one', async () => {
      // The receiver asked for rotations by default, and the transmitter delivers them.
      const stream = await tessera.request(`/ssf/streams?stream_id=${downstream.ready.streamId}`, { headers: { authorization: `Bearer ${receiverToken}` } });
      expect((stream.json() as { events_delivered: string[] }).events_delivered).toContain(TOKEN_ROTATED);
      const first = await newPair();
      expect(await ordersStatus(downstream, first.token)).toBe(200);
      const refreshed = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: first.refresh_token });
      expect(refreshed.status).toBe(200);
      const elapsedMs = await refusedWithin(downstream, first.token, `the replaced token refused by the ${mode} downstream`);
      timings.push(`${mode}: refresh answered → replaced access token refused downstream in ${elapsedMs.toFixed(0)} ms`);
      expect(elapsedMs).toBeLessThan(1_000);
      expect(await ordersStatus(downstream, (refreshed.json() as unknown as Pair).token)).toBe(200);
    });

    it('restarted on the same state file, resumes its stream and still refuses the revoked token', async () => {
      const { streamId } = downstream.ready;
      await downstream.stop();
      downstream = await startDownstream(mode, port, stateFile);
      timings.push(`${mode}: restarted and ready in ${downstream.ready.readyMs} ms`);
      expect(downstream.ready.streamId).toBe(streamId);
      // The SET was acknowledged before the restart: the transmitter does not send it again, the state file holds it.
      const family = revoked.refresh_token.slice('tsr_'.length).split('.')[0]!;
      expect(readFileSync(stateFile, 'utf8')).toContain(`"familyId":"${family}"`);
      expect(await ordersStatus(downstream, revoked.token)).toBe(401);
      expect(await ordersStatus(downstream, (await newPair()).token)).toBe(200);
      expect(downstream.output()).not.toContain(receiverToken);
    });
  });
});
