import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../infra/kafka/kafka-broker.js';

/**
 * Runs Tessera the way a user does: `tessera start` as its own process, over HTTPS, with
 * the CLI against the same data folder. Tests trust the server's self-signed certificate
 * by its file, not by switching verification off.
 */
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const cli = join(repositoryRoot, 'apps', 'cli', 'bin', 'tessera.js');
const run = promisify(execFile);

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  // Bodies are whatever the server sent; each test narrows what it reads.
  readonly json: () => Record<string, unknown>;
}

export interface RequestOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** Which listener: the v5 one (default) or the separate v1 one. */
  readonly legacy?: boolean;
  /** The source address to connect from (any 127.x.y.z is this host): a second client, as the server sees it. */
  readonly localAddress?: string;
  /**
   * How long the socket may stay silent before the request fails with its method, path and the
   * server's last log lines (default 20 s, under the 30 s a test has, so a hang names itself).
   */
  readonly silenceMs?: number;
}

export interface TesseraProcess {
  readonly baseUrl: string;
  readonly legacyBaseUrl: string;
  /** The admin listener (/metrics, /healthz, /readyz); undefined with TESSERA_ADMIN_PORT=off. */
  readonly adminUrl: string | undefined;
  readonly dataDir: string;
  /** The server process's id (node itself: prlimit and taskset exec it), for reading /proc. */
  readonly pid: number;
  readonly env: NodeJS.ProcessEnv;
  readonly logs: () => string;
  request(path: string, options?: RequestOptions): Promise<HttpAnswer>;
  /** A request to the admin listener; throws when it is off. */
  adminRequest(path: string, options?: Omit<RequestOptions, 'legacy'>): Promise<HttpAnswer>;
  postJson(path: string, body: unknown, headers?: Record<string, string>, options?: Pick<RequestOptions, 'legacy' | 'localAddress'>): Promise<HttpAnswer>;
  tessera(args: string[]): Promise<{ stdout: string; stderr: string }>;
  createAccount(options?: { permissions?: string[]; legacy?: boolean; name?: string }): Promise<Credentials>;
  signal(signal: NodeJS.Signals): void;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export interface Credentials {
  readonly account_id: string;
  readonly api_login_id: string;
  readonly transaction_key: string;
  readonly apiid?: string;
  readonly apikey?: string;
}

export { freePort };

export interface StartOptions {
  dataDir?: string;
  keepData?: boolean;
  command?: 'start' | 'issuer' | 'verifier' | 'relay';
  /** Write the server's output to this file instead of this process's heap (benchmarks). */
  logFile?: string;
  /** Return once /readyz says ready (default), or once /healthz answers: a process that cannot be ready yet. */
  until?: 'ready' | 'listening';
  /** Flags for node itself, before the CLI (for example an --import hook). */
  nodeArgs?: string[];
  /** Start the server under this open-file limit (`prlimit --nofile`), as a small host would. */
  openFilesLimit?: number;
  /** Start the server pinned to these CPUs (`taskset -c`, e.g. "1"): benchmarks keep it off the load generator's core. */
  cpuList?: string;
  /** The certificate to trust, when the server is given its own (TESSERA_TLS_CERT) rather than making one in its data folder. */
  caFile?: string;
}

/** The server could not bind a port this harness picked: something else took it after freePort let it go. */
class PickedPortTaken extends Error {}

export async function startTessera(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TesseraProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tessera-e2e-'));
  // A port is free when picked and bound a second or more later by the child; in between, any
  // process on the host may take it (an outgoing connection's local port, another test's server).
  // Only a port this harness picked is picked again, and it says so: a test that names its ports
  // gets the failure.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(env, { ...options, dataDir });
    } catch (error) {
      if (!(error instanceof PickedPortTaken) || attempt === 3) throw error;
      process.stderr.write(`tessera-process: ${error.message}; starting again on new ports\n`);
    }
  }
}

async function startOnce(env: Record<string, string>, options: StartOptions & { dataDir: string }): Promise<TesseraProcess> {
  const dataDir = options.dataDir;
  // A fixed port when the test names one (two regions must know each other's address before either starts).
  const port = env.TESSERA_PORT ? Number(env.TESSERA_PORT) : await freePort();
  const legacyPort = env.TESSERA_LEGACY_PORT ? Number(env.TESSERA_LEGACY_PORT) : port;
  // Every process gets its own admin port: on the default 9443, tests running side by side would collide.
  const adminPort = env.TESSERA_ADMIN_PORT ?? String(await freePort());
  const processEnv: NodeJS.ProcessEnv = {
    ...process.env,
    TESSERA_DATA_DIR: dataDir,
    TESSERA_PORT: String(port),
    TESSERA_HOST: '127.0.0.1',
    TESSERA_LOG_LEVEL: 'info',
    TESSERA_ADMIN_PORT: adminPort,
    ...env,
  };
  delete processEnv.NODE_OPTIONS;
  const logFd = options.logFile === undefined ? undefined : openSync(options.logFile, 'a', 0o600);
  const nodeCommand = [process.execPath, ...(options.nodeArgs ?? []), cli, options.command ?? 'start'];
  // prlimit and taskset exec the command, so the child is node itself (signals reach it, its pid is the server's).
  const limited = options.openFilesLimit === undefined ? nodeCommand : ['prlimit', `--nofile=${options.openFilesLimit}:${options.openFilesLimit}`, ...nodeCommand];
  const command = options.cpuList === undefined ? limited : ['taskset', '-c', options.cpuList, ...limited];
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    env: processEnv,
    stdio: logFd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', logFd, logFd],
  });
  if (logFd !== undefined) closeSync(logFd);
  let piped = '';
  child.stdout?.on('data', (chunk: Buffer) => (piped += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (piped += chunk.toString('utf8')));
  const logs = () => (options.logFile === undefined ? piped : readFileSync(options.logFile, 'utf8'));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));

  const baseUrl = `https://localhost:${port}`;
  const legacyBaseUrl = `https://localhost:${legacyPort}`;
  const adminUrl = adminPort === 'off' ? undefined : `https://localhost:${adminPort}`;
  let ca: Buffer | undefined;
  const caFile = options.caFile ?? join(dataDir, 'tls', 'self-signed.crt');

  async function send(path: string, options: RequestOptions & { admin?: boolean } = {}): Promise<HttpAnswer> {
    ca ??= readFileSync(caFile);
    if (options.admin && adminUrl === undefined) throw new Error('the admin listener is off (TESSERA_ADMIN_PORT=off)');
    const url = new URL(path, options.admin ? adminUrl : options.legacy ? legacyBaseUrl : baseUrl);
    return new Promise((resolveAnswer, reject) => {
      const outgoing = request(url, { method: options.method ?? 'GET', headers: options.headers, ca, agent: false, localAddress: options.localAddress }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolveAnswer({ status: incoming.statusCode ?? 0, headers: incoming.headers, text, json: () => JSON.parse(text) as Record<string, unknown> });
        });
        incoming.on('error', reject);
      });
      const silenceMs = options.silenceMs ?? 20_000;
      outgoing.setTimeout(silenceMs, () => {
        const lastLines = logs().trimEnd().split('\n').slice(-20).join('\n');
        outgoing.destroy(new Error(`${options.method ?? 'GET'} ${url.href}: no answer within ${silenceMs} ms; the server's last log lines:\n${lastLines}`));
      });
      outgoing.on('error', reject);
      if (options.body !== undefined) outgoing.write(options.body);
      outgoing.end();
    });
  }

  const tessera = (args: string[]) => run(process.execPath, [cli, ...args], { env: processEnv, cwd: repositoryRoot });

  const startedAt = Date.now();
  const deadline = startedAt + 30_000;
  let lastProbe = 'no probe yet';
  let warned = false;
  for (;;) {
    if (child.exitCode !== null) {
      // packages/server's start failure: "cannot listen on HOST:PORT (PORT_VARIABLE, HOST_VARIABLE): … [EADDRINUSE]".
      const taken = /cannot listen on [^ ]*:(\d+) \((TESSERA_[A-Z_]*PORT),[^\n]*\[EADDRINUSE\]/.exec(logs());
      if (taken && env[taken[2]!] === undefined) throw new PickedPortTaken(`port ${taken[1]} (${taken[2]}) was taken before the server could bind it`);
      throw new Error(`tessera exited during start:\n${logs()}`);
    }
    try {
      // A probe that hangs must not outlast the deadline: it is retried like a refused one.
      const ready = await send(options.until === 'listening' ? '/healthz' : '/readyz', { silenceMs: 2_000 });
      if (ready.status === 200) break;
      lastProbe = `answered ${ready.status}: ${ready.text}`;
    } catch (error) {
      // Not listening yet, or no certificate yet.
      lastProbe = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    }
    if (Date.now() > deadline) throw new Error(`tessera did not become ready within 30 s (last probe: ${lastProbe}):\n${logs()}`);
    // A test whose own timeout is 30 s ends before the deadline above: say what is slow while it can be read.
    if (!warned && Date.now() - startedAt > 10_000) {
      warned = true;
      process.stderr.write(`tessera-process: ${options.command ?? 'start'} on port ${port} not ready after 10 s (last probe: ${lastProbe}); its log so far:\n${logs()}\n`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    baseUrl,
    legacyBaseUrl,
    adminUrl,
    dataDir,
    pid: child.pid!,
    env: processEnv,
    logs,
    request: send,
    adminRequest: (path, requestOptions = {}) => send(path, { ...requestOptions, admin: true }),
    postJson: (path, body, headers = {}, options = {}) =>
      send(path, { ...options, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }),
    tessera,
    async createAccount({ permissions = ['transaction:charge'], legacy = false, name = 'e2e shop' } = {}) {
      const args = ['accounts', 'create', '--name', name, '--json', ...permissions.flatMap((p) => ['--permission', p])];
      if (legacy) args.push('--legacy');
      const { stdout } = await tessera(args);
      const credentials = JSON.parse(stdout) as Credentials;
      // The CLI wrote to the log; the server follows it within a poll interval.
      await waitUntilAccepted(credentials);
      return credentials;
    },
    signal: (signal) => child.kill(signal),
    exited,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };

  /** The running server must accept CLI-made credentials within one second. */
  async function waitUntilAccepted(credentials: Credentials): Promise<void> {
    const until = Date.now() + 1000;
    for (;;) {
      const answer = await send('/v5/Authorization/get-oauth-token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_login_id: credentials.api_login_id, transaction_key: credentials.transaction_key }),
      });
      if (answer.status === 200) return;
      if (Date.now() > until) throw new Error(`the server did not accept new credentials within 1 second (last answer ${answer.status})`);
      // At most 9 tries in the second: each 401 is charged to this credential's failure budget (10).
      await new Promise((r) => setTimeout(r, 120));
    }
  }
}
