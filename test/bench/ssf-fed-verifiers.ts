/**
 * SSF-fed verifiers: revoke answered → the first 401 at a downstream service that hears
 * revocations only through Tessera's Shared Signals, one row per SDK (Node, Python, Go) and
 * delivery (push, poll). `npm run bench -- ssf-sdk` runs this part alone.
 *
 * The downstreams are the programs the e2e tests run, started the same way: the Node one on the
 * built @tessera/verification (test/e2e/ssf-sdk-receiver/downstream.mjs), the Python one on the
 * wheel of sdk/python installed into a venv of its own (test/e2e/python-verification/downstream.py),
 * the Go module's example service for poll (sdk/go/examples/downstream) and ssf-go-push/ for push
 * (the example polls only). Each sample: a new token pair of the row's own account, the downstream
 * takes its access token (200), the refresh token is revoked at Tessera, and from the revoke's 200
 * the downstream's protected route is asked back to back (one request in flight, no pause; the
 * Python service on a new connection per ask, see asker) until it answers 401. Every time is read
 * in this process. Nothing is pinned: Tessera, the downstream
 * and this process share the machine's cores.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedGoBuild } from '../support/go-build-cache.js';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { benchDir, onCleanup, progress, repositoryRoot, stopGracefully } from './children.js';
import { atMost, type Row } from './report.js';
import { client, latencyOf, type Latency } from './shared-signals.js';

export type Sdk = 'Node' | 'Python' | 'Go';
export type Delivery = 'push' | 'poll';

export interface FedVerifierRow {
  readonly sdk: Sdk;
  readonly delivery: Delivery;
  /** How the downstream hears SETs, and any setting this bench chose (none: the SDKs' defaults). */
  readonly setting: string;
  /** How its protected route was asked: over one keep-alive connection, or a new connection each time. */
  readonly asked?: 'keep-alive' | 'new connection each';
  /** Absent when the row was not measured. */
  readonly latency?: Latency & {
    /** Samples the downstream still took 5 s after the revoke's answer (none when all is well). */
    readonly unrefused: number;
    /** Requests sent to the downstream per sample until its 401, median: the time resolution. */
    readonly medianAsks: number;
  };
  /** Why the row was not measured: a missing toolchain, or what failed. */
  readonly skipped?: string;
}

export interface SsfFedVerifiersResult {
  readonly samples: number;
  readonly warmUp: number;
  readonly rows: readonly FedVerifierRow[];
}

/** The p99 the open target asks of every row, ms. */
const targetP99Ms = 50;
/** A sample the downstream still takes after this long counts as unrefused. */
const refusalDeadlineMs = 5_000;

const settings: Record<Delivery, string> = {
  push: 'push (RFC 8935) to its own route, http on loopback',
  poll: 'long poll (RFC 8936, returnImmediately false); Tessera holds it up to TESSERA_SSF_POLL_WAIT, default 30 s',
};

interface Downstream {
  /** The protected route: GET with a bearer token. */
  readonly protectedUrl: string;
  /** Ask it on a new connection each time (see asker). */
  readonly newConnections?: boolean;
  /** The stream it hears, deleted once its row is measured. */
  readonly streamId: string;
  stop(): Promise<void>;
}

interface Started<Ready> {
  readonly ready: Ready;
  readonly output: () => string;
  stop(): Promise<void>;
}

/**
 * Starts a downstream program and waits, up to `timeoutMs`, for `readyOf` to find what it needs
 * in its standard output. `stdin` is its secret, written and closed (never argv or a log).
 */
async function startProgram<Ready>(
  name: string,
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; stdin?: string; cwd?: string; timeoutMs?: number },
  readyOf: (stdout: string) => Ready | undefined,
): Promise<Started<Ready>> {
  const child = spawn(command, args, { cwd: options.cwd ?? repositoryRoot, env: options.env ?? process.env, stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  const forget = onCleanup(() => child.kill('SIGKILL'));
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  void exited.then(forget);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout = (stdout + chunk.toString('utf8')).slice(-20_000)));
  // The tail only: a chatty downstream must not grow this process's heap.
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-20_000)));
  const stop = async () => {
    await stopGracefully(child, exited);
    forget();
  };
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ready = readyOf(stdout);
    if (ready !== undefined) return { ready, output: () => `${stdout}\n${stderr}`, stop };
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it was ready: ${stderr.slice(-2_000)}`);
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`${name} was not ready within ${timeoutMs} ms: ${stderr.slice(-2_000)}`);
    }
    await new Promise((wake) => setTimeout(wake, 20));
  }
}

/** The first JSON line of `stdout` that has `key`, parsed; undefined until one is complete. */
function jsonLineWith<Line>(stdout: string, key: string): Line | undefined {
  const line = stdout
    .split('\n')
    .slice(0, -1)
    .find((candidate) => candidate.startsWith('{') && candidate.includes(`"${key}"`));
  // The downstreams' own announcement lines.
  return line === undefined ? undefined : (JSON.parse(line) as Line);
}

/**
 * The downstream's protected route: each ask's status, read when its answer has ended. Over one
 * keep-alive connection, or with `newConnections` a connection per ask (Connection: close), for a
 * server that writes an answer's headers and body in two sends: on a kept connection Nagle's
 * algorithm holds the body until the client's delayed ACK of the headers, about 40 ms.
 */
function asker(url: string, newConnections: boolean) {
  const agent = new Agent({ keepAlive: !newConnections, maxSockets: 1 });
  const ask = (token: string): Promise<number> =>
    new Promise((resolveStatus, reject) => {
      const outgoing = request(url, { agent, headers: { authorization: `Bearer ${token}`, ...(newConnections ? { connection: 'close' } : {}) } }, (incoming) => {
        incoming.resume();
        incoming.on('end', () => resolveStatus(incoming.statusCode ?? 0));
        incoming.on('error', reject);
      });
      outgoing.setTimeout(refusalDeadlineMs, () => outgoing.destroy(new Error(`GET ${url}: no answer within ${refusalDeadlineMs} ms`)));
      outgoing.on('error', reject);
      outgoing.end();
    });
  return { ask, close: () => agent.destroy() };
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Python with PyJWT[crypto], the wheel of sdk/python installed into a venv: its interpreter, or why not. */
function pythonWithWheel(work: string): { python: string } | { skipped: string } {
  if (spawnSync('python3', ['-c', 'import jwt, cryptography'], { stdio: 'ignore' }).status !== 0) return { skipped: 'python3 with "pyjwt[crypto]" is not installed (pip install "pyjwt[crypto]")' };
  const wheels = join(work, 'wheels');
  const built = spawnSync('python3', ['-m', 'pip', 'wheel', '--no-deps', '--quiet', '-w', wheels, join(repositoryRoot, 'sdk', 'python')], { encoding: 'utf8', timeout: 180_000 });
  if (built.status !== 0) return { skipped: `pip wheel of sdk/python failed: ${built.stderr.slice(-500)}` };
  const wheel = readdirSync(wheels).find((file) => file.startsWith('tessera_verification-') && file.endsWith('.whl'));
  if (wheel === undefined) return { skipped: 'pip wheel made no tessera_verification wheel' };
  const venv = join(work, 'venv');
  // The system's site-packages for PyJWT and cryptography only, so that no index is needed.
  if (spawnSync('python3', ['-m', 'venv', '--system-site-packages', venv], { encoding: 'utf8', timeout: 120_000 }).status !== 0) return { skipped: 'python3 -m venv failed' };
  const python = join(venv, 'bin', 'python');
  const installed = spawnSync(python, ['-m', 'pip', 'install', '--no-deps', '--no-index', '--quiet', join(wheels, wheel)], { encoding: 'utf8', timeout: 120_000 });
  if (installed.status !== 0) return { skipped: `pip install of the wheel failed: ${installed.stderr.slice(-500)}` };
  return { python };
}

/** The Go example service (poll) and this bench's push service, from the build cache: their paths, or why not. */
async function goPrograms(): Promise<{ poll: string; push: string } | { skipped: string }> {
  if (spawnSync('go', ['version'], { stdio: 'ignore' }).status !== 0) return { skipped: 'no Go toolchain on PATH' };
  const sdkFolder = join(repositoryRoot, 'sdk', 'go');
  try {
    const example = await cachedGoBuild({ name: 'tessera-sdk-go-downstream', moduleFolder: sdkFolder, sourceFolders: [], binaries: { './examples/downstream': 'downstream' } });
    const push = await cachedGoBuild({ name: 'tessera-bench-ssf-go-push', moduleFolder: join(benchDir, 'ssf-go-push'), sourceFolders: [sdkFolder], binaries: { '.': 'ssf-go-push' } });
    progress(`SSF-fed verifiers: Go programs ${example.built || push.built ? 'built' : 'found in the build cache'} in ${((example.elapsedMs + push.elapsedMs) / 1000).toFixed(1)} s`);
    return { poll: example.paths.downstream!, push: push.paths['ssf-go-push']! };
  } catch (error) {
    return { skipped: `go build failed: ${(error as Error).message.slice(0, 500)}` };
  }
}

export async function measureSsfFedVerifiers(options: { samples?: number; warmUp?: number } = {}): Promise<SsfFedVerifiersResult> {
  const samples = options.samples ?? 200;
  const warmUp = options.warmUp ?? 5;
  const work = mkdtempSync(join(tmpdir(), 'tessera-bench-ssf-sdk-'));
  const rows: FedVerifierRow[] = [];
  let tessera: TesseraProcess | undefined;
  let forgetTessera: () => void = () => undefined;
  let http: ReturnType<typeof client> | undefined;
  try {
    progress('SSF-fed verifiers: the Python wheel into a venv, the Go programs (cached builds)');
    const python = pythonWithWheel(work);
    const go = await goPrograms();
    for (const [sdk, prepared] of [
      ['Python', python],
      ['Go', go],
    ] as const) {
      if ('skipped' in prepared) progress(`\n${'!'.repeat(78)}\n!! SKIPPING the ${sdk} rows of SSF-fed verifiers: ${prepared.skipped}\n${'!'.repeat(78)}`);
    }

    const port = await freePort();
    const dataDir = join(work, 'data');
    mkdirSync(dataDir, { mode: 0o700 });
    progress('SSF-fed verifiers: starting Tessera (tessera start)');
    // Pushes go to the downstreams on this machine: loopback, over http, only because this names it.
    tessera = await startTessera(
      { TESSERA_PORT: String(port), TESSERA_PUBLIC_URL: `https://localhost:${port}`, TESSERA_EGRESS_ALLOW: '127.0.0.1', TESSERA_LOG_LEVEL: process.env.BENCH_TESSERA_LOG_LEVEL ?? 'info' },
      { dataDir, logFile: join(work, 'tessera.log') },
    );
    const started = tessera;
    forgetTessera = onCleanup(() => process.kill(started.pid, 'SIGKILL'));
    const caFile = join(dataDir, 'tls', 'self-signed.crt');
    const tesseraHttp = (http = client(started, readFileSync(caFile)));
    const receiverToken = (JSON.parse((await started.tessera(['ssf-receivers', 'create', '--name', 'bench SSF-fed verifiers', '--json'])).stdout) as { token: string }).token;
    const transmitterIssuer = ((await started.request('/.well-known/ssf-configuration')).json() as { issuer: string }).issuer;
    // The server follows the log: a new receiver token is taken within a second.
    for (let tries = 0; (await started.request('/ssf/streams', { headers: { authorization: `Bearer ${receiverToken}` } })).status !== 200; tries += 1) {
      if (tries > 50) throw new Error('the receiver token was not accepted within 5 s');
      await new Promise((wake) => setTimeout(wake, 100));
    }
    const asReceiver = (method: string, path: string, body?: unknown) =>
      started.request(path, { method, headers: { authorization: `Bearer ${receiverToken}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

    /** A push stream to `endpoint` following `account`, as a receiver that serves push makes one. */
    const pushStream = async (endpoint: string, authorization: string, account: Credentials): Promise<string> => {
      const created = await asReceiver('POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: endpoint, authorization_header: authorization } });
      if (created.status !== 201) throw new Error(`creating a push stream answered ${created.status}`);
      const streamId = created.json().stream_id as string;
      const added = await asReceiver('POST', '/ssf/subjects/add', { stream_id: streamId, subject: { format: 'iss_sub', iss: transmitterIssuer, sub: account.account_id } });
      if (added.status !== 200) throw new Error(`adding the subject answered ${added.status}`);
      return streamId;
    };

    const nodeDownstream = async (delivery: Delivery, account: Credentials): Promise<Downstream> => {
      const downstreamPort = await freePort();
      const program = await startProgram<{ streamId: string }>(
        `the Node ${delivery} downstream`,
        process.execPath,
        [join(repositoryRoot, 'test', 'e2e', 'ssf-sdk-receiver', 'downstream.mjs')],
        {
          env: {
            ...process.env,
            NODE_OPTIONS: '',
            NODE_EXTRA_CA_CERTS: caFile,
            TRANSMITTER_URL: started.baseUrl,
            RECEIVER_TOKEN: receiverToken,
            MODE: delivery,
            PORT: String(downstreamPort),
            ACCOUNT_ID: account.account_id,
            STATE_FILE: join(work, `node-${delivery}.jsonl`),
            PUSH_SECRET: randomBytes(24).toString('base64url'),
          },
        },
        (stdout) => jsonLineWith<{ streamId: string }>(stdout, 'ready'),
      );
      return { protectedUrl: `http://127.0.0.1:${downstreamPort}/orders`, streamId: program.ready.streamId, stop: program.stop };
    };

    const pythonDownstream = async (interpreter: string, delivery: Delivery, account: Credentials): Promise<Downstream> => {
      const pushAuthorization = `Bearer ${randomBytes(24).toString('base64url')}`;
      const program = await startProgram<{ port: number; stream_id: string | null }>(
        `the Python ${delivery} downstream`,
        interpreter,
        [join(repositoryRoot, 'test', 'e2e', 'python-verification', 'downstream.py'), '--tessera', transmitterIssuer, '--ca', caFile, '--issuer', 'urn:tessera:issuer', '--issuer', transmitterIssuer, ...(delivery === 'push' ? ['--push'] : ['--account', account.account_id])],
        { stdin: `${delivery === 'push' ? pushAuthorization : receiverToken}\n`, cwd: work },
        (stdout) => jsonLineWith<{ port: number; stream_id: string | null }>(stdout, 'port'),
      );
      const { port: downstreamPort, stream_id: pollStream } = program.ready;
      const streamId = pollStream ?? (await pushStream(`http://127.0.0.1:${downstreamPort}/ssf/events`, pushAuthorization, account));
      // http.server sends the headers, then the body: on a kept connection each answer waits ~40 ms for a delayed ACK.
      return { protectedUrl: `http://127.0.0.1:${downstreamPort}/charges`, newConnections: true, streamId, stop: program.stop };
    };

    const goDownstream = async (programs: { poll: string; push: string }, delivery: Delivery, account: Credentials): Promise<Downstream> => {
      const caArgs = ['-tessera', started.baseUrl, '-ca', caFile];
      if (delivery === 'poll') {
        const program = await startProgram<{ listening: string; streamId: string }>(
          'the Go poll downstream',
          programs.poll,
          [...caArgs, '-accounts', account.account_id, '-permission', 'transaction:charge'],
          { stdin: `${receiverToken}\n` },
          (stdout) => {
            const listening = jsonLineWith<{ listening: string }>(stdout, 'listening');
            const ready = jsonLineWith<{ ssf_ready: string }>(stdout, 'ssf_ready');
            return listening && ready ? { listening: listening.listening, streamId: ready.ssf_ready } : undefined;
          },
        );
        return { protectedUrl: `${program.ready.listening}/orders`, streamId: program.ready.streamId, stop: program.stop };
      }
      const pushAuthorization = `Bearer ${randomBytes(24).toString('base64url')}`;
      const program = await startProgram('the Go push downstream', programs.push, caArgs, { stdin: `${pushAuthorization}\n` }, (stdout) => jsonLineWith<{ listening: string }>(stdout, 'listening'));
      const streamId = await pushStream(`${program.ready.listening}/ssf/events`, pushAuthorization, account);
      return { protectedUrl: `${program.ready.listening}/orders`, streamId, stop: program.stop };
    };

    /** One row: the downstream on an account of its own, warm-up then the samples, then its stream deleted. */
    const measureRow = async (sdk: Sdk, delivery: Delivery, start: (account: Credentials) => Promise<Downstream>): Promise<FedVerifierRow> => {
      progress(`SSF-fed verifiers: ${sdk} ${delivery}, ${warmUp} + ${samples} revocations one at a time`);
      const account = await started.createAccount({ name: `bench ${sdk} ${delivery}` });
      const downstream = await start(account);
      const downstreamAsk = asker(downstream.protectedUrl, downstream.newConnections === true);
      try {
        const latencies: number[] = [];
        const asks: number[] = [];
        let unrefused = 0;
        for (let index = 0; index < warmUp + samples; index += 1) {
          const pair = await tesseraHttp.post('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
          if (pair.status !== 200) throw new Error(`get-oauth-token answered ${pair.status}`);
          const { token, refresh_token: refreshToken } = pair.json() as { token: string; refresh_token: string };
          const before = await downstreamAsk.ask(token);
          if (before !== 200) throw new Error(`the downstream answered ${before} for a fresh token, not 200`);
          const revoked = await tesseraHttp.post('/v5/Authorization/revoke-oauth-token', { refresh_token: refreshToken });
          if (revoked.status !== 200) throw new Error(`revoke-oauth-token answered ${revoked.status}`);
          const answeredAt = performance.now();
          let refusedAt: number | undefined;
          let count = 0;
          while (refusedAt === undefined && performance.now() - answeredAt < refusalDeadlineMs) {
            const status = await downstreamAsk.ask(token);
            count += 1;
            if (status === 401) refusedAt = performance.now();
            else if (status !== 200) throw new Error(`the downstream answered ${status} while the revoked token was asked again`);
          }
          if (index < warmUp) continue;
          if (refusedAt === undefined) unrefused += 1;
          else latencies.push(refusedAt - answeredAt);
          asks.push(count);
        }
        if (latencies.length === 0) return { sdk, delivery, setting: settings[delivery], skipped: `no revoked token refused within ${refusalDeadlineMs} ms` };
        const measured: FedVerifierRow = { sdk, delivery, setting: settings[delivery], asked: downstream.newConnections === true ? 'new connection each' : 'keep-alive', latency: { ...latencyOf(latencies), unrefused, medianAsks: median(asks) } };
        progress(describeRow(measured));
        return measured;
      } finally {
        downstreamAsk.close();
        await downstream.stop();
        // Tessera stops delivering to it (a push stream would otherwise retry a closed port).
        await asReceiver('DELETE', `/ssf/streams?stream_id=${encodeURIComponent(downstream.streamId)}`);
      }
    };

    const plan: [Sdk, Delivery, ((account: Credentials) => Promise<Downstream>) | string][] = [];
    for (const delivery of ['push', 'poll'] as const) {
      plan.push(['Node', delivery, (account) => nodeDownstream(delivery, account)]);
      plan.push(['Python', delivery, 'skipped' in python ? python.skipped : (account) => pythonDownstream(python.python, delivery, account)]);
      plan.push(['Go', delivery, 'skipped' in go ? go.skipped : (account) => goDownstream(go, delivery, account)]);
    }
    for (const [sdk, delivery, start] of plan) {
      if (typeof start === 'string') {
        rows.push({ sdk, delivery, setting: settings[delivery], skipped: start });
        continue;
      }
      try {
        rows.push(await measureRow(sdk, delivery, start));
      } catch (error) {
        const message = (error as Error).message;
        progress(`SSF-fed verifiers: ${sdk} ${delivery} NOT measured: ${message}`);
        rows.push({ sdk, delivery, setting: settings[delivery], skipped: `failed: ${message.slice(0, 300)}` });
      }
    }
    return { samples, warmUp, rows };
  } finally {
    http?.close();
    await tessera?.stop();
    forgetTessera();
    rmSync(work, { recursive: true, force: true });
  }
}

function describeRow(row: FedVerifierRow): string {
  if (!row.latency) return `SSF-fed verifier, ${row.sdk} ${row.delivery}: SKIPPED — ${row.skipped}`;
  const l = row.latency;
  return (
    `SSF-fed verifier, ${row.sdk} ${row.delivery} (${row.setting}): revoke answered → 401 downstream, ${l.samples} one at a time: ` +
    `p50 ${l.p50Ms} ms, p90 ${l.p90Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms; ${l.medianAsks} asks per sample (median, ${row.asked === 'keep-alive' ? 'over one keep-alive connection' : 'a new connection each'}); ${l.unrefused} not refused within ${refusalDeadlineMs / 1000} s`
  );
}

export function describeSsfFedVerifiers(result: SsfFedVerifiersResult): string {
  return result.rows.map(describeRow).join('\n');
}

export function ssfFedVerifierRows(result: SsfFedVerifiersResult): Row[] {
  return result.rows.map((row): Row => {
    const what = `SSF-fed verifier ${row.sdk} ${row.delivery}: revoke → 401, p50 / p90 / p99 / max ms (${row.latency?.samples ?? result.samples})`;
    if (!row.latency) return { what, tessera: 'SKIPPED', peer: '—', ratio: '—', target: `p99 ≤ ${targetP99Ms}`, met: '—', distance: `SKIPPED: ${row.skipped}` };
    const l = row.latency;
    const p99 = atMost(l.p99Ms, targetP99Ms, ' ms');
    return {
      what,
      tessera: `${l.p50Ms} / ${l.p90Ms} / ${l.p99Ms} / ${l.maxMs}`,
      peer: '—',
      ratio: '—',
      target: `p99 ≤ ${targetP99Ms}`,
      met: p99.met && l.unrefused === 0,
      distance: l.unrefused === 0 ? p99.distance : `${p99.distance}; ${l.unrefused} not refused within ${refusalDeadlineMs / 1000} s`,
    };
  });
}
