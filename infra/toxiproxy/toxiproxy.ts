/**
 * Shopify's Toxiproxy 2.12.0: a TCP proxy whose links can be slowed or cut through an HTTP API.
 * The kernel of the development machine has no netem, so this is how latency and partitions are
 * put between regions running on one machine. The server is built once with `go install` (through
 * the Go module proxy) and cached outside the repository, like the Kafka jars.
 *
 * As a library: `startToxiproxy()`, then the typed client it returns.
 * As a command:  npx tsx infra/toxiproxy/toxiproxy.ts build | run   (see usage()).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { destroyOnSignal, onPath, runAsCommand } from '../kafka/command-line.js';
import { freePort } from '../kafka/kafka-broker.js';
import { tail } from '../kafka/log-file.js';
import { OwnedProcess, processHandle, workFolder, type ProcessHandle } from '../kafka/owned-process.js';

export const toxiproxyVersion = '2.12.0';
const host = '127.0.0.1';

export function toxiproxyCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'tessera', `toxiproxy-${toxiproxyVersion}`);
}

export function toxiproxyBinary(): string {
  return join(toxiproxyCacheDir(), 'server');
}

/** True when this machine can run Toxiproxy: the server built already, or Go to build it. */
export function canRunToxiproxy(): boolean {
  return existsSync(toxiproxyBinary()) || onPath('go');
}

/**
 * Builds the server into the cache once. `go install` writes into a scratch folder and the
 * binary is renamed into place, so a build cut short never leaves a binary that looks complete
 * and two concurrent builds cannot mix their files.
 */
export function ensureToxiproxy(): string {
  const binary = toxiproxyBinary();
  if (existsSync(binary)) return binary;
  const folder = toxiproxyCacheDir();
  mkdirSync(folder, { recursive: true });
  const scratch = mkdtempSync(join(folder, 'build-'));
  try {
    const built = spawnSync('go', ['install', `github.com/Shopify/toxiproxy/v2/cmd/server@v${toxiproxyVersion}`], {
      encoding: 'utf8',
      env: { ...process.env, GOBIN: scratch },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (built.status !== 0) throw new Error(`go install of Toxiproxy ${toxiproxyVersion} failed:\n${built.stdout}\n${built.stderr}`);
    renameSync(join(scratch, 'server'), binary);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return binary;
}

/** Which way a toxic acts: upstream is client → server, downstream server → client. */
export type ToxicStream = 'upstream' | 'downstream';

/** The toxics this project uses, with the attributes Toxiproxy 2.12 takes for each. */
export type ToxicKind =
  /** Delays each piece of data by `latency` ms, ± `jitter` ms. */
  | { readonly type: 'latency'; readonly attributes: { readonly latency: number; readonly jitter?: number } }
  /** Caps the rate at `rate` KB/s. */
  | { readonly type: 'bandwidth'; readonly attributes: { readonly rate: number } }
  /** Stops all data and closes the connection after `timeout` ms (0: never closes, data just stops). */
  | { readonly type: 'timeout'; readonly attributes: { readonly timeout: number } }
  /** Resets the connection (TCP RST) after `timeout` ms. */
  | { readonly type: 'reset_peer'; readonly attributes: { readonly timeout: number } };

export type ToxicSpec = ToxicKind & {
  /** Default `<type>_<stream>`. */
  readonly name?: string;
  readonly stream: ToxicStream;
  /** Probability that a connection gets the toxic; default 1. */
  readonly toxicity?: number;
};

export type Toxic = ToxicKind & { readonly name: string; readonly stream: ToxicStream; readonly toxicity: number };

export interface ProxySpec {
  readonly name: string;
  /** host:port to listen on; default 127.0.0.1:0, a port Toxiproxy picks (read it from the answer). */
  readonly listen?: string;
  /** host:port to forward to. Nothing need listen there yet: Toxiproxy dials it per connection. */
  readonly upstream: string;
  readonly enabled?: boolean;
}

export interface ProxyState {
  readonly name: string;
  /** The address really listened on (the port resolved when the spec said 0). */
  readonly listen: string;
  readonly listenPort: number;
  readonly upstream: string;
  readonly enabled: boolean;
  readonly toxics: readonly Toxic[];
}

export interface ToxiproxyOptions {
  /** API port; default a free one. */
  readonly port?: number;
  /** Where the server's log goes; default a new temp folder, removed by destroy(). */
  readonly workDir?: string;
  /** Pid whose death kills the server. Default this process; 0: none. */
  readonly ownerPid?: number;
  readonly startTimeoutMs?: number;
}

export interface Toxiproxy extends ProcessHandle {
  /** http://127.0.0.1:<port>, the HTTP API. */
  readonly apiUrl: string;
  readonly port: number;
  readonly logFile: string;
  createProxy(spec: ProxySpec): Promise<ProxyState>;
  proxy(name: string): Promise<ProxyState>;
  proxies(): Promise<ProxyState[]>;
  deleteProxy(name: string): Promise<void>;
  /** Points the proxy elsewhere; its open connections are cut, it keeps listening on the same address. */
  setUpstream(name: string, upstream: string): Promise<ProxyState>;
  /**
   * Disabled: the listener closes and every open connection through it is cut, so new ones are
   * refused (a partition). Enabled: it listens again on the same address.
   */
  setEnabled(name: string, enabled: boolean): Promise<ProxyState>;
  addToxic(proxyName: string, toxic: ToxicSpec): Promise<Toxic>;
  removeToxic(proxyName: string, toxicName: string): Promise<void>;
  /**
   * Latency on both streams ("each way"): toxics `latency_upstream` and `latency_downstream`,
   * replaced if there. 0 removes them.
   */
  setLatency(proxyName: string, latencyMs: number, jitterMs?: number): Promise<void>;
  /** Every proxy enabled and every toxic removed. */
  reset(): Promise<void>;
  /** SIGTERM (the server closes its proxies), SIGKILL after 5 s. */
  stop(): Promise<void>;
}

interface ProxyAnswer {
  readonly name: string;
  readonly listen: string;
  readonly upstream: string;
  readonly enabled: boolean;
  readonly toxics?: readonly Toxic[];
}

function proxyState(answer: ProxyAnswer): ProxyState {
  return {
    name: answer.name,
    listen: answer.listen,
    listenPort: Number(answer.listen.slice(answer.listen.lastIndexOf(':') + 1)),
    upstream: answer.upstream,
    enabled: answer.enabled,
    toxics: answer.toxics ?? [],
  };
}

export class ToxiproxyApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What the server logs when it cannot bind its API port: it logs and keeps running, so this is looked for. */
const bindFailure = 'Server finished with error';

export async function startToxiproxy(options: ToxiproxyOptions = {}): Promise<Toxiproxy> {
  const binary = ensureToxiproxy();
  const folder = workFolder(options.workDir, 'tessera-toxiproxy-');
  const logFile = join(folder.dir, 'toxiproxy.log');
  const ownerPid = options.ownerPid ?? process.pid;
  const startTimeoutMs = options.startTimeoutMs ?? 10_000;

  const owned = new OwnedProcess(ownerPid);
  // Toxiproxy stops at once on SIGTERM; five seconds is plenty before forcing it.
  const stop = (): Promise<void> => owned.stop('SIGTERM', 5_000);

  let apiUrl = '';
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const answer = await fetch(`${apiUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await answer.text();
    if (!answer.ok) throw new ToxiproxyApiError(answer.status, `Toxiproxy ${method} ${path} answered ${answer.status}: ${text}`);
    // The API answers JSON or nothing; the shapes are Toxiproxy's, described by the types above.
    return (text ? JSON.parse(text) : undefined) as T;
  };

  // A free port can be taken between freePort() and the server's bind; then try another one.
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = options.port ?? (await freePort());
    apiUrl = `http://${host}:${port}`;
    // Ready: the API answers. (A server built by `go install` reports its version as "git".)
    const listening = await owned.launch(binary, ['-host', host, '-port', String(port)], {
      what: 'Toxiproxy',
      logFile,
      timeoutMs: startTimeoutMs,
      pollMs: 50,
      check: async (logSinceSpawn) => {
        if (logSinceSpawn().includes(bindFailure)) return 'gave-up';
        try {
          return typeof (await api<{ version?: unknown }>('GET', '/version')).version === 'string';
        } catch {
          return false;
        }
      },
    });
    if (listening) break;
    await stop();
    if (options.port !== undefined || attempt >= 3) throw new Error(`Toxiproxy could not listen on ${apiUrl}; log ${logFile}:\n${tail(logFile)}`);
  }

  const proxyPath = (name: string) => `/proxies/${encodeURIComponent(name)}`;
  const toxicsOf = async (name: string) => api<Toxic[]>('GET', `${proxyPath(name)}/toxics`);
  const removeToxic = async (proxyName: string, toxicName: string) => {
    await api('DELETE', `${proxyPath(proxyName)}/toxics/${encodeURIComponent(toxicName)}`);
  };
  const addToxic = async (proxyName: string, toxic: ToxicSpec): Promise<Toxic> =>
    api<Toxic>('POST', `${proxyPath(proxyName)}/toxics`, {
      name: toxic.name ?? `${toxic.type}_${toxic.stream}`,
      type: toxic.type,
      stream: toxic.stream,
      toxicity: toxic.toxicity ?? 1,
      attributes: toxic.attributes,
    });

  return {
    ...processHandle(owned, folder, stop),
    apiUrl,
    port,
    logFile,
    createProxy: async ({ name, listen = `${host}:0`, upstream, enabled = true }) =>
      proxyState(await api<ProxyAnswer>('POST', '/proxies', { name, listen, upstream, enabled })),
    proxy: async (name) => proxyState(await api<ProxyAnswer>('GET', proxyPath(name))),
    proxies: async () => Object.values(await api<Record<string, ProxyAnswer>>('GET', '/proxies')).map(proxyState),
    deleteProxy: async (name) => {
      await api('DELETE', proxyPath(name));
    },
    setUpstream: async (name, upstream) => proxyState(await api<ProxyAnswer>('PATCH', proxyPath(name), { upstream })),
    setEnabled: async (name, enabled) => proxyState(await api<ProxyAnswer>('PATCH', proxyPath(name), { enabled })),
    addToxic,
    removeToxic,
    setLatency: async (proxyName, latencyMs, jitterMs = 0) => {
      const present = new Set((await toxicsOf(proxyName)).map((toxic) => toxic.name));
      for (const stream of ['upstream', 'downstream'] as const) {
        const name = `latency_${stream}`;
        if (present.has(name)) await removeToxic(proxyName, name);
        if (latencyMs > 0) await addToxic(proxyName, { name, type: 'latency', stream, attributes: { latency: latencyMs, jitter: jitterMs } });
      }
    },
    reset: async () => {
      await api('POST', '/reset');
    },
    stop,
  };
}

function usage(): never {
  console.error(`usage: npx tsx infra/toxiproxy/toxiproxy.ts <command> [--port PORT]
  build   build the server into ${toxiproxyBinary()} (go install, once)
  run     start the server in the foreground and print its API address; Ctrl-C stops it`);
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const portFlag = rest.indexOf('--port');
  const port = portFlag >= 0 ? Number(rest[portFlag + 1]) : undefined;
  switch (command) {
    case 'build':
      console.log(ensureToxiproxy());
      return;
    case 'run': {
      const toxiproxy = await startToxiproxy({ port });
      console.log(toxiproxy.apiUrl);
      console.error(`Toxiproxy ${toxiproxyVersion} API at ${toxiproxy.apiUrl}; log ${toxiproxy.logFile}`);
      destroyOnSignal(toxiproxy);
      return;
    }
    default:
      usage();
  }
}

runAsCommand(import.meta.url, main);
