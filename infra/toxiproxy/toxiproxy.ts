/**
 * Shopify's Toxiproxy 2.12.0: a TCP proxy whose links can be slowed or cut through an HTTP API.
 * The kernel here has no netem, so this is how `npm run sim:regions` puts latency and partitions
 * between regions. The server is built once with `go install` through the Go module proxy and
 * cached outside the repository, like the Kafka jars.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort, watchOwner } from '../kafka/kafka-broker.js';

export const toxiproxyVersion = '2.12.0';

export function toxiproxyBinary(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'tessera', `toxiproxy-${toxiproxyVersion}`, 'server');
}

/** Builds the server into the cache if it is not there; a build cut short never looks complete. */
export function ensureToxiproxy(): string {
  const binary = toxiproxyBinary();
  if (existsSync(binary)) return binary;
  const folder = join(binary, '..');
  mkdirSync(join(folder, '..'), { recursive: true });
  const scratch = mkdtempSync(`${folder}.build-`);
  const built = spawnSync('go', ['install', `github.com/Shopify/toxiproxy/v2/cmd/server@v${toxiproxyVersion}`], {
    encoding: 'utf8',
    env: { ...process.env, GOBIN: scratch },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (built.status !== 0) {
    rmSync(scratch, { recursive: true, force: true });
    throw new Error(`go install of Toxiproxy ${toxiproxyVersion} failed:\n${built.stdout}\n${built.stderr}`);
  }
  mkdirSync(folder, { recursive: true });
  renameSync(join(scratch, 'server'), binary);
  rmSync(scratch, { recursive: true, force: true });
  return binary;
}

export interface ProxySpec {
  readonly name: string;
  /** host:port to listen on. */
  readonly listen: string;
  /** host:port to forward to. */
  readonly upstream: string;
}

export interface Toxiproxy {
  readonly apiUrl: string;
  createProxy(spec: ProxySpec): Promise<void>;
  /** Disabled: the listener closes and every open connection through it is cut (a partition). */
  setEnabled(name: string, enabled: boolean): Promise<void>;
  /** Latency added to each direction of the link (`upstream` and `downstream` toxics); 0 removes it. */
  setLatency(name: string, ms: number, jitterMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startToxiproxy(options: { ownerPid?: number } = {}): Promise<Toxiproxy> {
  const binary = ensureToxiproxy();
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(binary, ['-host', '127.0.0.1', '-port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const onProcessExit = () => child.kill('SIGKILL');
  process.once('exit', onProcessExit);
  if (child.pid !== undefined) watchOwner(options.ownerPid ?? process.pid, child.pid);

  const api = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const answer = await fetch(`${apiUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await answer.text();
    if (!answer.ok) throw new Error(`Toxiproxy ${method} ${path} answered ${answer.status}: ${text}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  };

  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await api('GET', '/version');
      break;
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`Toxiproxy did not start: ${String(error)}\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const latencies = new Map<string, boolean>();
  return {
    apiUrl,
    createProxy: async (spec) => {
      await api('POST', '/proxies', { ...spec, enabled: true });
    },
    setEnabled: async (name, enabled) => {
      await api('POST', `/proxies/${encodeURIComponent(name)}`, { enabled });
    },
    setLatency: async (name, ms, jitterMs = 0) => {
      for (const stream of ['upstream', 'downstream'] as const) {
        const toxic = `latency_${stream}`;
        if (latencies.get(`${name}/${toxic}`)) {
          await api('DELETE', `/proxies/${encodeURIComponent(name)}/toxics/${toxic}`);
          latencies.delete(`${name}/${toxic}`);
        }
        if (ms > 0) {
          await api('POST', `/proxies/${encodeURIComponent(name)}/toxics`, { name: toxic, type: 'latency', stream, toxicity: 1, attributes: { latency: ms, jitter: jitterMs } });
          latencies.set(`${name}/${toxic}`, true);
        }
      }
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      process.removeListener('exit', onProcessExit);
    },
  };
}
