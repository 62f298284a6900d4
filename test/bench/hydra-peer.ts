/**
 * Ory Hydra v2 as a peer of the OAuth door: `hydra serve all` over HTTPS on 127.0.0.1 with the
 * same certificate as the Tessera under test, JWT access tokens, SQLite in a file, pinned with
 * taskset like every other server under load. The binary comes from build-hydra.sh (built once
 * from the Go module proxy into a cache outside the repository); where it cannot be had, the
 * bench says so and goes on without this peer.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchDir, onCleanup, progress } from './children.js';
import type { LoadTarget } from './load.js';

/**
 * How Hydra hashes client secrets. `default` sets nothing, so Hydra runs as shipped: its config
 * schema (spec/config.json of v2.3.0) defaults oauth2.hashers.algorithm to pbkdf2 and
 * oauth2.hashers.pbkdf2.iterations to 25,000 (PBKDF2-HMAC-SHA256, 16-byte salt, 32-byte key, in
 * driver/config/provider.go). `cheapest` is the least work the schema allows: pbkdf2 with
 * 1 iteration (its minimum), far less than bcrypt at its minimum cost of 4 (2⁴ Eksblowfish rounds).
 */
export type HydraHashing = 'default' | 'cheapest';

export const hydraHashingSettings: Record<HydraHashing, { readonly describe: string; readonly config: Record<string, unknown> }> = {
  default: { describe: 'pbkdf2-sha256, 25,000 iterations (Hydra’s default, nothing set)', config: {} },
  cheapest: { describe: 'pbkdf2-sha256, 1 iteration (the schema’s minimum)', config: { hashers: { algorithm: 'pbkdf2', pbkdf2: { iterations: 1 } } } },
};

export interface HydraPeer {
  readonly pid: number;
  readonly version: string;
  /** client_credentials at the public port, client_secret_basic, the same body as Tessera's. */
  readonly issue: LoadTarget;
  /** A fresh access token from the issue target (setup, not measured). */
  accessToken(): Promise<string>;
  /** The admin port's RFC 7662 endpoint; Hydra's admin API takes no client authentication. */
  introspection(accessToken: string): LoadTarget;
  /** The POST answer of the admin introspection, to check a token is active before measuring. */
  introspect(accessToken: string): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

const defaultVersion = 'v2.3.0';

/**
 * SQLite in a file, WAL, synchronous=FULL: durable like Tessera's log. Not DSN=memory: that is a
 * shared-cache in-memory SQLite (mode=memory&cache=shared) that lives only while one of its pool's
 * connections is open, and at the end of a full-load run, when the load generator drops its
 * connections mid-request, the pool closed them all and the next request found no tables
 * ("Unable to locate the table", a 401 invalid_client for every request after).
 */
export const hydraDsnDescription = 'SQLite file, WAL, synchronous=FULL (sqlite://…/hydra.sqlite?_fk=true&_journal_mode=WAL&_synchronous=FULL)';
const hydraDsn = (dir: string) => `sqlite://${join(dir, 'hydra.sqlite')}?_fk=true&_journal_mode=WAL&_synchronous=FULL`;

/**
 * The Hydra binary: $BENCH_HYDRA_BIN when set, else build-hydra.sh's (which builds it on first
 * use, minutes on two cores, and answers from its cache after). The reason instead when there is
 * none, so the caller can skip the peer and say why.
 */
export function findHydra(): { binary: string; version: string } | { reason: string } {
  const fromEnvironment = process.env.BENCH_HYDRA_BIN;
  const version = process.env.HYDRA_VERSION ?? defaultVersion;
  if (fromEnvironment) return { binary: fromEnvironment, version };
  progress(`Hydra ${version}: test/bench/build-hydra.sh (builds once into ~/.cache/tessera-bench, then reuses it)`);
  const built = spawnSync('bash', [resolve(benchDir, 'build-hydra.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  const binary = built.stdout.trim().split('\n').at(-1);
  if (built.status !== 0 || !binary) return { reason: `build-hydra.sh failed (${built.status ?? built.signal}): ${built.stderr.trim().split('\n').slice(-5).join(' | ')}` };
  return { binary, version };
}

async function freePort(): Promise<number> {
  // Hydra takes its ports from its config, so one the kernel just handed out is the least likely to be taken.
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      // A server listening on a TCP port has an AddressInfo, never the string of a pipe.
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}

/** Hydra's settings are its config file's: an environment variable of the same name (DSN, SECRETS_SYSTEM, ...) would win over it, so none goes through. */
function hydraEnvironment(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (/^(DSN|SECRETS_|STRATEGIES_|OAUTH2_|SERVE_|URLS_|LOG_|TTL_)/.test(name)) delete env[name];
  return env;
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

export async function startHydraPeer(options: {
  binary: string;
  version: string;
  hashing: HydraHashing;
  tlsFiles: { cert: string; key: string };
  cpuList?: string;
}): Promise<HydraPeer> {
  const [publicPort, adminPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-hydra-'));
  const issuer = `https://127.0.0.1:${publicPort}/`;
  const config = {
    dsn: hydraDsn(dir),
    // Info, Hydra's default: one line per request, as Tessera writes its access line at info.
    log: { level: 'info' },
    serve: {
      public: { host: '127.0.0.1', port: publicPort },
      admin: { host: '127.0.0.1', port: adminPort },
      tls: { enabled: true, cert: { path: options.tlsFiles.cert }, key: { path: options.tlsFiles.key } },
    },
    urls: { self: { issuer } },
    secrets: { system: [randomBytes(32).toString('hex')] },
    strategies: { access_token: 'jwt' },
    oauth2: hydraHashingSettings[options.hashing].config,
  };
  // JSON is YAML, and Hydra reads its config file by the extension.
  const configFile = join(dir, 'hydra.json');
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  // A SQLite file starts empty: serve does not migrate it (it does only for DSN=memory).
  const migrated = spawnSync(options.binary, ['migrate', 'sql', 'up', '--read-from-env', '--yes', '--config', configFile], { cwd: dir, encoding: 'utf8', env: hydraEnvironment() });
  if (migrated.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`hydra migrate sql up failed (${migrated.status ?? migrated.signal}): ${migrated.stderr.slice(-1000)}`);
  }
  // Hydra's log goes to a file, as Tessera's does: a pipe would put it into the load generator's heap.
  const logFd = openSync(join(dir, 'hydra.log'), 'a');
  const command = [options.binary, 'serve', 'all', '--config', configFile];
  const pinnedCommand = options.cpuList === undefined ? command : ['taskset', '-c', options.cpuList, ...command];
  let child: ChildProcess;
  try {
    child = spawn(pinnedCommand[0]!, pinnedCommand.slice(1), { cwd: dir, env: hydraEnvironment(), stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
  const forget = onCleanup(() => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const logTail = () => {
    try {
      return readFileSync(join(dir, 'hydra.log'), 'utf8').slice(-3000);
    } catch {
      return '';
    }
  };
  const ca = readFileSync(options.tlsFiles.cert);
  const agent = new Agent({ keepAlive: true, maxSockets: 4, ca });
  const send = (url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
    new Promise<{ status: number; text: string }>((resolveAnswer, reject) => {
      const outgoing = request(url, { method: init.method ?? 'GET', agent, headers: init.headers ?? {} }, (incoming) => {
        let text = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => (text += chunk));
        incoming.on('end', () => resolveAnswer({ status: incoming.statusCode ?? 0, text }));
        incoming.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(init.body);
    });
  const admin = `https://127.0.0.1:${adminPort}`;
  const stop = async () => {
    agent.destroy();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
    forget();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`hydra exited (${child.exitCode ?? child.signalCode}) before it was ready\n${logTail()}`);
      const ready = await send(`${admin}/health/ready`).catch(() => undefined);
      if (ready?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`hydra was not ready within 60 s\n${logTail()}`);
      await new Promise((resolveWait) => setTimeout(resolveWait, 200));
    }
    const clientSecret = randomBytes(32).toString('base64url');
    const created = await send(`${admin}/admin/clients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'bench client', client_secret: clientSecret, grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_basic' }),
    });
    if (created.status !== 201) throw new Error(`POST /admin/clients answered ${created.status}: ${created.text.slice(0, 300)}`);
    // Hydra's client answer (a 201 checked above): JSON.parse gives no type, and only client_id is read.
    const clientId = (JSON.parse(created.text) as { client_id: string }).client_id;
    const issue: LoadTarget = {
      url: `${issuer}oauth2/token`,
      headers: { ...form, authorization: basic(clientId, clientSecret) },
      body: 'grant_type=client_credentials',
    };
    // Hydra makes its token signing key on the first token request: under load, concurrent first requests race to make it and answer 500. One request first.
    const first = await send(issue.url, { method: 'POST', headers: { ...issue.headers }, body: 'grant_type=client_credentials' });
    if (first.status !== 200) throw new Error(`hydra's first token request answered ${first.status}: ${first.text.slice(0, 300)}`);
    const introspection = (accessToken: string): LoadTarget => ({ url: `${admin}/admin/oauth2/introspect`, headers: form, body: `token=${accessToken}` });
    return {
      pid: child.pid!,
      version: options.version,
      issue,
      async accessToken() {
        const answer = await send(issue.url, { method: 'POST', headers: { ...issue.headers }, body: 'grant_type=client_credentials' });
        if (answer.status !== 200) throw new Error(`hydra's token endpoint answered ${answer.status}: ${answer.text.slice(0, 300)}`);
        // A 200 token answer (RFC 6749 5.1) has access_token; JSON.parse gives no type.
        return (JSON.parse(answer.text) as { access_token: string }).access_token;
      },
      introspection,
      introspect: (accessToken) => send(`${admin}/admin/oauth2/introspect`, { method: 'POST', headers: form, body: `token=${accessToken}` }),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
