import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../infra/kafka/kafka-broker.js';
import { until } from './until.js';

/**
 * Runs Tessera the way a user does: `tessera start` as its own process, over HTTPS, with
 * the CLI against the same data folder. Tests trust the server's self-signed certificate
 * by its file, not by switching verification off. Unless a test names its ports, the server
 * listens on port 0 (TESSERA_PORT=0, TESSERA_ADMIN_PORT=0): the system picks free ports as the
 * listeners bind them, so no other process can take one in between, and the harness reads them
 * from the server's start line (`tessera listening`), checked against what /readyz answers.
 */
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const cli = join(repositoryRoot, 'services', 'cli', 'bin', 'tessera.js');
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
  /** The public listener, on the port the server bound. */
  readonly baseUrl: string;
  readonly legacyBaseUrl: string;
  /** The admin listener (/metrics, /healthz, /readyz); undefined with TESSERA_ADMIN_PORT=off. */
  readonly adminUrl: string | undefined;
  readonly dataDir: string;
  /** The server process's id (node itself: prlimit and taskset exec it), for reading /proc. */
  readonly pid: number;
  /** The server's environment, its port variables set to the ports it bound: what the CLI and scripts beside it read. */
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
  /** How long it may take to be ready (default 30 s): a benchmark's million-event log takes its read models longer to catch up. */
  readyWithinMs?: number;
}

/** The ports of the server's start line (packages/server's `tessera listening`), as /readyz also answers them. */
interface BoundPorts {
  readonly public?: number;
  readonly legacy?: number;
  readonly admin?: number;
}

/** The bound ports from the server's start line, once it has been written. */
function startLinePorts(logs: string): BoundPorts | undefined {
  for (const line of logs.split('\n')) {
    if (!line.includes('"msg":"tessera listening"')) continue;
    // The server's own JSON log line; only `ports` is read.
    return (JSON.parse(line) as { ports: BoundPorts }).ports;
  }
  return undefined;
}

const samePorts = (a: BoundPorts, b: BoundPorts) => a.public === b.public && a.legacy === b.legacy && a.admin === b.admin;

export async function startTessera(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TesseraProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tessera-e2e-'));
  // Port 0 unless the test names a port (two regions must know each other's address before either
  // starts; a restarted server must come back where its clients know it): every process gets ports
  // of its own, and tests running side by side cannot collide.
  const processEnv: NodeJS.ProcessEnv = {
    ...process.env,
    TESSERA_DATA_DIR: dataDir,
    TESSERA_PORT: '0',
    TESSERA_HOST: '127.0.0.1',
    TESSERA_LOG_LEVEL: 'info',
    TESSERA_ADMIN_PORT: '0',
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

  // Known once the server has written its start line.
  let ports: BoundPorts | undefined;
  let baseUrl = '';
  let legacyBaseUrl = '';
  let adminUrl: string | undefined;
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
  const listening = (bound: BoundPorts): void => {
    if (bound.public === undefined) throw new Error(`tessera's start line names no public port:\n${logs()}`);
    ports = bound;
    baseUrl = `https://localhost:${bound.public}`;
    legacyBaseUrl = `https://localhost:${bound.legacy ?? bound.public}`;
    adminUrl = bound.admin === undefined ? undefined : `https://localhost:${bound.admin}`;
    processEnv.TESSERA_PORT = String(bound.public);
    if (bound.legacy !== undefined) processEnv.TESSERA_LEGACY_PORT = String(bound.legacy);
    if (bound.admin !== undefined) processEnv.TESSERA_ADMIN_PORT = String(bound.admin);
  };

  const startedAt = Date.now();
  const readyWithinMs = options.readyWithinMs ?? 30_000;
  const deadline = startedAt + readyWithinMs;
  let lastProbe = 'no probe yet';
  let warned = false;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`tessera exited during start:\n${logs()}`);
    if (ports === undefined) {
      const bound = startLinePorts(logs());
      if (bound) listening(bound);
    }
    let ready: HttpAnswer | undefined;
    if (ports === undefined) {
      lastProbe = 'no start line yet';
    } else {
      try {
        // A probe that hangs must not outlast the deadline: it is retried like a refused one.
        ready = await send(options.until === 'listening' ? '/healthz' : '/readyz', { silenceMs: 2_000 });
        lastProbe = `answered ${ready.status}: ${ready.text}`;
      } catch (error) {
        // No certificate yet, or the listener is closing on a failed start.
        lastProbe = error instanceof Error ? error.message.split('\n')[0]! : String(error);
      }
    }
    if (ready?.status === 200 && ports) {
      if (options.until !== 'listening') {
        // The readiness answer's JSON; only `ports` is read.
        const answered = ready.json().ports as BoundPorts | undefined;
        if (!answered || !samePorts(answered, ports)) throw new Error(`/readyz answers the ports ${JSON.stringify(answered)}, the start line ${JSON.stringify(ports)}`);
      }
      break;
    }
    if (Date.now() > deadline) throw new Error(`tessera did not become ready within ${readyWithinMs / 1000} s (last probe: ${lastProbe}):\n${logs()}`);
    // A test whose own timeout is 30 s ends before the deadline above: say what is slow while it can be read.
    if (!warned && Date.now() - startedAt > 10_000) {
      warned = true;
      process.stderr.write(`tessera-process: ${options.command ?? 'start'} in ${dataDir} not ready after 10 s (last probe: ${lastProbe}); its log so far:\n${logs()}\n`);
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
    // At most 9 tries in the second: each 401 is charged to this credential's failure budget (10).
    await until(
      () =>
        send('/v5/Authorization/get-oauth-token', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_login_id: credentials.api_login_id, transaction_key: credentials.transaction_key }),
        }),
      'the server to accept new credentials',
      { done: (answer) => answer.status === 200, timeoutMs: 1000, everyMs: 120 },
    );
  }
}
