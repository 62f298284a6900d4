/**
 * A real single-node Kafka broker (KRaft, combined broker + controller) without Docker:
 * the broker's jars come from Maven Central and run on the local JVM.
 *
 * As a library: `startKafkaBroker()` (tests, the vitest globalSetup).
 * As a command:  npx tsx infra/kafka/kafka-broker.ts fetch | run | start | stop  (see usage()).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareSecurity, type BrokerSecurity, type KafkaSecurityOptions, type SecurityMaterial } from './broker-security.js';
import { destroyOnSignal, runAsCommand } from './command-line.js';
import { canRunJars, consoleLog4j, fetchJarsOnce, testJvmArgs } from './jvm.js';
import { OwnedProcess, processHandle, workFolder, type ProcessHandle } from './owned-process.js';

export { watchOwner } from './owned-process.js';
export { logContainsSince, tail } from './log-file.js';
export type { BrokerSecurity, KafkaSecurityOptions, OAuthIssuer, SaslMechanismName, SaslUser, TlsClient } from './broker-security.js';

export const kafkaVersion = '3.9.1';
const here = dirname(fileURLToPath(import.meta.url));
const host = '127.0.0.1';
const readyLine = 'Kafka Server started';

export interface KafkaBrokerOptions {
  /** Where the broker's storage, config and log live. Default: a new temp folder, removed by destroy(). */
  readonly workDir?: string;
  /** Client port; default a free one. The controller takes a second free port. */
  readonly port?: number;
  readonly startTimeoutMs?: number;
  readonly heapMb?: number;
  /** Pid whose death kills the broker, so a crashed test run leaves no JVM behind. 0: none. */
  readonly ownerPid?: number;
  /**
   * A second listener, REMOTE, for clients in another region that reach this broker through a
   * proxy (Toxiproxy). A Kafka client only bootstraps from the address it is given and then
   * connects to the addresses the broker advertises, so this listener advertises the proxy's
   * address: those clients keep going through the proxy. Clients of PLAINTEXT are unaffected.
   */
  readonly remoteListener?: RemoteListenerOptions;
  /**
   * A secured broker: no PLAINTEXT listener. Clients come in over SASL_SSL (SCRAM-SHA-512,
   * SCRAM-SHA-256, PLAIN; the bootstrap address) or over SSL with a client certificate; the
   * broker talks to itself over SSL with its own certificate. ACLs are enforced by KRaft's
   * StandardAuthorizer, and what no ACL allows is denied; `admin` and the broker are super users.
   * A REMOTE listener is SASL_SSL too. Needs openssl.
   */
  readonly security?: KafkaSecurityOptions;
}

export interface RemoteListenerOptions {
  /** Port the broker binds for this listener (the proxy's upstream); default a free one. */
  readonly port?: number;
  /** Where the proxy listens; default host 127.0.0.1. */
  readonly advertisedHost?: string;
  readonly advertisedPort: number;
}

export interface KafkaBroker extends ProcessHandle {
  /** host:port, the value for TESSERA_KAFKA_BROKERS. */
  readonly bootstrap: string;
  readonly port: number;
  /** The REMOTE listener's own port (the proxy's upstream), when the broker has one. */
  readonly remotePort: number | undefined;
  readonly logFile: string;
  /** For a secured broker: its listeners, CA, users and client certificates. */
  readonly security: BrokerSecurity | undefined;
  /** Starts the same broker again: same storage, same ports, same cluster. */
  start(): Promise<void>;
  /** SIGTERM is a clean shutdown; SIGKILL simulates a crash (the log is recovered on start). */
  stop(options?: { signal?: 'SIGTERM' | 'SIGKILL' }): Promise<void>;
}

export function kafkaCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'tessera', `kafka-${kafkaVersion}`);
}

/** True when this machine can run the broker: a JVM, and the jars cached or Maven to fetch them. */
export function canRunKafkaBroker(): boolean {
  return canRunJars(join(kafkaCacheDir(), 'jars'));
}

/** Copies kafka_2.13 and its runtime dependencies into the cache once. */
export function ensureKafkaJars(): string {
  return fetchJarsOnce(join(here, 'pom.xml'), join(kafkaCacheDir(), 'jars'), `Kafka ${kafkaVersion}`);
}

/**
 * A port nothing listens on now. The probe lets it go before returning it, so the kernel may hand
 * the same one to the next probe: this process never gives out a port twice (CI once got
 * TESSERA_ADMIN_PORT equal to TESSERA_PORT from two calls in a row).
 */
const handedOut = new Set<number>();
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await probePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function probePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolveAccepts) => {
    const socket = createConnection({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolveAccepts(true);
    });
    socket.once('error', () => resolveAccepts(false));
  });
}

/** Kafka cluster ids are 16 random bytes in base64url; Kafka itself never makes one starting with '-'. */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

interface RemoteListener {
  readonly port: number;
  readonly advertised: string;
}

interface Ports {
  /** The clients' listener: PLAINTEXT, or SASL_SSL on a secured broker. */
  readonly client: number;
  readonly controller: number;
  /** A secured broker's mutual-TLS listener for clients and SSL listener for itself. */
  readonly mtls?: number;
  readonly broker?: number;
  /** A secured broker's OAUTHBEARER listener, when asked for. */
  readonly oauth?: number;
}

function serverProperties(dataDir: string, ports: Ports, remote: RemoteListener | undefined, security: SecurityMaterial | undefined): string {
  // name, protocol, bound port, advertised address (none for the controller, which is not advertised).
  const listeners: [string, string, number, string | undefined][] = security
    ? [
        ['SASL_SSL', 'SASL_SSL', ports.client, `${host}:${ports.client}`],
        ['MTLS', 'SSL', ports.mtls!, `${host}:${ports.mtls!}`],
        ['BROKER', 'SSL', ports.broker!, `${host}:${ports.broker!}`],
        ['CONTROLLER', 'SSL', ports.controller, undefined],
        ...(ports.oauth === undefined ? [] : [['OAUTH', 'SASL_SSL', ports.oauth, `${host}:${ports.oauth}`] as [string, string, number, string]]),
      ]
    : [
        ['PLAINTEXT', 'PLAINTEXT', ports.client, `${host}:${ports.client}`],
        ['CONTROLLER', 'PLAINTEXT', ports.controller, undefined],
      ];
  // A client is told the addresses of the listener it came in on: through REMOTE, the proxy's.
  if (remote) listeners.push(['REMOTE', security ? 'SASL_SSL' : 'PLAINTEXT', remote.port, remote.advertised]);
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@${host}:${ports.controller}`,
    `listeners=${listeners.map(([name, , port]) => `${name}://${host}:${port}`).join(',')}`,
    `advertised.listeners=${listeners.flatMap(([name, , , advertised]) => (advertised ? [`${name}://${advertised}`] : [])).join(',')}`,
    'controller.listener.names=CONTROLLER',
    `inter.broker.listener.name=${security ? 'BROKER' : 'PLAINTEXT'}`,
    `listener.security.protocol.map=${listeners.map(([name, protocol]) => `${name}:${protocol}`).join(',')}`,
    // OAUTH takes OAUTHBEARER alone: the password mechanisms' entries are for the other SASL listeners.
    ...(security?.properties(listeners.filter(([name, protocol]) => protocol === 'SASL_SSL' && name !== 'OAUTH').map(([name]) => name)) ?? []),
    `log.dirs=${dataDir}`,
    // Topics are created on purpose, with their partitions and retention; a typo must not make one.
    'auto.create.topics.enable=false',
    'num.partitions=3',
    // One node: every internal topic has one replica. Few offsets partitions make the first group join quick.
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=3',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=3',
    'group.initial.rebalance.delay.ms=0',
    // Two cores: fewer threads than the defaults leave room for the tests.
    'num.network.threads=2',
    'num.io.threads=2',
    'background.threads=2',
    'num.recovery.threads.per.data.dir=1',
    '',
  ].join('\n');
}

const log4jProperties = consoleLog4j('[%d] %p %m (%c)%n', 'log4j.logger.kafka.request.logger=WARN', 'log4j.logger.state.change.logger=WARN');

const jvmArgs = (jars: string, workDir: string, heapMb: number, systemProperties: readonly string[] = []) =>
  testJvmArgs(jars, heapMb, join(workDir, 'log4j.properties'), `-Dkafka.logs.dir=${workDir}`, ...systemProperties);

export async function startKafkaBroker(options: KafkaBrokerOptions = {}): Promise<KafkaBroker> {
  const jars = ensureKafkaJars();
  const folder = workFolder(options.workDir, 'tessera-kafka-');
  const workDir = folder.dir;
  const dataDir = join(workDir, 'data');
  const logFile = join(workDir, 'broker.log');
  const configFile = join(workDir, 'server.properties');
  const heapMb = options.heapMb ?? 512;
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const ownerPid = options.ownerPid ?? process.pid;

  let ports: Ports;
  let remotePort: number | undefined;
  const securityMaterial = existsSync(join(workDir, 'security')) || options.security ? prepareSecurity(workDir, options.security ?? {}) : undefined;
  if (existsSync(configFile)) {
    // Same storage, same ports: a restarted broker must look like the one clients knew.
    const listeners = /^listeners=(.*)$/m.exec(readFileSync(configFile, 'utf8'))?.[1] ?? '';
    const portOf = (name: string) => {
      const found = new RegExp(`(?:^|,)${name}://[^,]*:(\\d+)`).exec(listeners)?.[1];
      return found === undefined ? undefined : Number(found);
    };
    ports = { client: portOf(securityMaterial ? 'SASL_SSL' : 'PLAINTEXT')!, controller: portOf('CONTROLLER')!, mtls: portOf('MTLS'), broker: portOf('BROKER'), oauth: portOf('OAUTH') };
    remotePort = portOf('REMOTE');
  } else {
    ports = {
      client: options.port ?? (await freePort()),
      controller: await freePort(),
      ...(securityMaterial ? { mtls: await freePort(), broker: await freePort() } : {}),
      ...(securityMaterial?.oauthIssuer ? { oauth: await freePort() } : {}),
    };
    let remote: RemoteListener | undefined;
    if (options.remoteListener) {
      const { advertisedHost = host, advertisedPort } = options.remoteListener;
      remotePort = options.remoteListener.port ?? (await freePort());
      remote = { port: remotePort, advertised: `${advertisedHost}:${advertisedPort}` };
    }
    // A secured broker's file holds the PLAIN users' passwords: its owner's only.
    writeFileSync(configFile, serverProperties(dataDir, ports, remote, securityMaterial), { mode: 0o600 });
    writeFileSync(join(workDir, 'log4j.properties'), log4jProperties);
  }
  const port = ports.client;

  if (!existsSync(join(dataDir, 'meta.properties'))) {
    const formatted = spawnSync(
      'java',
      [...jvmArgs(jars, workDir, 256), 'kafka.tools.StorageTool', 'format', '--ignore-formatted', '-t', clusterId(), '-c', configFile, ...(securityMaterial?.scramArguments ?? [])],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (formatted.status !== 0) throw new Error(`kafka-storage format failed:\n${formatted.stdout}\n${formatted.stderr}`);
  }

  const owned = new OwnedProcess(ownerPid);

  const start = async (): Promise<void> => {
    if (owned.running) return;
    await owned.launch('java', [...jvmArgs(jars, workDir, heapMb, securityMaterial?.systemProperties), 'kafka.Kafka', configFile], {
      what: 'Kafka broker',
      logFile,
      timeoutMs: startTimeoutMs,
      check: async (logSinceSpawn) => logSinceSpawn().includes(readyLine) && (await accepts(port)),
    });
  };

  const stop = ({ signal = 'SIGTERM' }: { signal?: 'SIGTERM' | 'SIGKILL' } = {}): Promise<void> => owned.stop(signal);

  await start();
  const security: BrokerSecurity | undefined = securityMaterial && {
    saslSslBootstrap: `${host}:${port}`,
    mtlsBootstrap: `${host}:${ports.mtls!}`,
    caFile: securityMaterial.caFile,
    admin: securityMaterial.admin,
    users: securityMaterial.users,
    tlsClients: securityMaterial.tlsClients,
    brokerPrincipal: securityMaterial.brokerPrincipal,
    oauth: securityMaterial.oauthIssuer && { ...securityMaterial.oauthIssuer, bootstrap: `${host}:${ports.oauth!}` },
  };
  return { ...processHandle(owned, folder, stop), bootstrap: `${host}:${port}`, port, remotePort, logFile, security, start, stop };
}

function usage(): never {
  console.error(`usage: npx tsx infra/kafka/kafka-broker.ts <command> [--dir DIR] [--port PORT] [--secured]
  fetch            fetch the broker's jars into ${kafkaCacheDir()}
  run              start a broker in the foreground; Ctrl-C stops it and removes its folder (unless --dir)
  start --dir DIR  start a broker in the background, write DIR/bootstrap and DIR/broker.pid, print the bootstrap address
  stop --dir DIR   stop the broker started with --dir DIR (add --clean to remove DIR)
  --secured        SASL_SSL and ACLs: prints where the CA and the admin user's password file are`);
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const flag = (name: string) => {
    const index = rest.indexOf(`--${name}`);
    return index >= 0 ? rest[index + 1] : undefined;
  };
  const dir = flag('dir');
  const port = flag('port') === undefined ? undefined : Number(flag('port'));
  const security = rest.includes('--secured') ? {} : undefined;
  // Paths only: the password stays in its file.
  const describeSecurity = (broker: KafkaBroker) => {
    if (broker.security) console.error(`SASL_SSL at ${broker.bootstrap}, CA ${broker.security.caFile}; super user ${broker.security.admin.username}, password in ${broker.security.admin.passwordFile}`);
  };
  switch (command) {
    case 'fetch':
      console.log(ensureKafkaJars());
      return;
    case 'run': {
      const broker = await startKafkaBroker({ workDir: dir, port, security });
      console.log(broker.bootstrap);
      console.error(`Kafka ${kafkaVersion} ready at ${broker.bootstrap}; log ${broker.logFile}`);
      describeSecurity(broker);
      destroyOnSignal(broker);
      return;
    }
    case 'start': {
      if (!dir) usage();
      // The broker outlives this command: no owner, and the pid is left for `stop`.
      const broker = await startKafkaBroker({ workDir: dir, port, ownerPid: 0, security });
      describeSecurity(broker);
      const pid = broker.pid();
      writeFileSync(join(broker.workDir, 'broker.pid'), `${pid}\n`);
      writeFileSync(join(broker.workDir, 'bootstrap'), `${broker.bootstrap}\n`);
      console.log(broker.bootstrap);
      // Detach from the JVM so this command can return while the broker runs on.
      process.removeAllListeners('exit');
      process.exit(0);
      return;
    }
    case 'stop': {
      if (!dir) usage();
      const pidFile = join(dir, 'broker.pid');
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, 'utf8').trim());
        const alive = () => {
          try {
            process.kill(pid, 0);
            return true;
          } catch {
            return false;
          }
        };
        if (alive()) process.kill(pid, 'SIGTERM');
        const deadline = Date.now() + 20_000;
        while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        if (alive()) process.kill(pid, 'SIGKILL');
        rmSync(pidFile, { force: true });
      }
      if (rest.includes('--clean')) rmSync(dir, { recursive: true, force: true });
      return;
    }
    default:
      usage();
  }
}

runAsCommand(import.meta.url, main);
