/**
 * MirrorMaker 2 without Docker: `connect-mirror` from the same Kafka 3.9.1 distribution on Maven
 * Central as the broker (kafka-broker.ts), run on the local JVM in dedicated mode. One process
 * per destination region (`--clusters <target>`): it pulls from the other regions, so a sick
 * source region is only ever read from, never written to.
 *
 * As a library: `startMirrorMaker()`.
 * As a command:  npx tsx infra/kafka/mirror-maker.ts fetch | run   (see usage()).
 */
import { writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { destroyOnSignal, runAsCommand } from './command-line.js';
import { canRunJars, consoleLog4j, fetchJarsOnce, testJvmArgs } from './jvm.js';
import { kafkaCacheDir, kafkaVersion } from './kafka-broker.js';
import { OwnedProcess, processHandle, workFolder, type ProcessHandle } from './owned-process.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface MirrorFlow {
  /** Cluster aliases. The default replication policy names a mirrored topic `<source>.<topic>`. */
  readonly source: string;
  readonly target: string;
  /** Exact topic names to mirror (not patterns). */
  readonly topics: readonly string[];
}

/**
 * How MM2 reaches a secured cluster: TLS always, then a SASL login, a client certificate, or
 * both. Secrets are never written into mm2.properties: the password and the key are read from
 * their files by Kafka's DirectoryConfigProvider when MM2 starts.
 */
export interface MirrorClusterSecurity {
  /** PEM CA(s) that signed the cluster's broker certificates, as a PEM truststore. Omitted: the JVM's default truststore. */
  readonly caFile?: string;
  /** SASL_SSL with this login. Omitted: SSL, and a client certificate is the login. */
  readonly sasl?: {
    readonly mechanism: 'SCRAM-SHA-512' | 'SCRAM-SHA-256' | 'PLAIN';
    readonly username: string;
    /** A file holding only the password. */
    readonly passwordFile: string;
  };
  /** PEM certificate and its PEM PKCS#8 key (unencrypted) for mutual TLS. */
  readonly clientCertificate?: { readonly certFile: string; readonly keyFile: string };
}

export interface MirrorMakerOptions {
  /** Alias → bootstrap address, as this process reaches each cluster (a remote one through its proxy). */
  readonly clusters: Readonly<Record<string, string>>;
  /** Alias → how to reach a secured cluster; a cluster not named is PLAINTEXT. */
  readonly clusterSecurity?: Readonly<Record<string, MirrorClusterSecurity>>;
  readonly flows: readonly MirrorFlow[];
  /** The cluster this process serves (`--clusters`): only the flows into it run here. */
  readonly runIn: string;
  /** Where mm2.properties and the log go. Default: a new temp folder, removed by destroy(). */
  readonly workDir?: string;
  readonly heapMb?: number;
  /** Pid whose death kills MirrorMaker. Default this process; 0: none. */
  readonly ownerPid?: number;
  /**
   * The source consumer's fetch.max.wait.ms. A fetch waits at the source broker until a record
   * arrives or this runs out; the broker answers as soon as a record is appended. Each time it
   * runs out on a quiet topic, the next fetch spends a round trip on the wire, and a record that
   * lands then waits for it: at 500 ms over a link of 40 ms each way, 80 ms of every 580, which
   * was the whole p99 of a revocation's crossing (121.7 ms against 52.9 ms at 10 000).
   * Default 10 000 (Kafka's is 500, below the consumer's 30 s request timeout either way); see
   * README.md for the measurements.
   */
  readonly fetchMaxWaitMs?: number;
  /**
   * tasks.max: source partitions are spread over this many tasks, each with its own consumer
   * and so its own fetch waiting at the source. With one task, every heartbeat (one a second)
   * and every account event ended the one fetch the revocations waited on too. Default 12, one
   * per partition for Tessera's three 3-partition topics and the heartbeats, with room: a task
   * holding a busy family partition and a revocation partition would make each revocation that
   * lands while its fetch is on the wire wait a round trip for the next.
   */
  readonly tasks?: number;
  /**
   * How often the Connect worker commits the source offsets it has mirrored. After a crash
   * (SIGKILL) everything since the last commit is mirrored again: this bounds the duplicates.
   * Default 1000 (Connect's own default is 60 000).
   */
  readonly offsetFlushIntervalMs?: number;
  /**
   * What start() waits for:
   * - 'replicating' (default): every flow into runIn has a running source task, which has logged
   *   the partitions it replicates. Needs the flows' source topics to exist: a flow whose topics
   *   do not exist yet has no task.
   * - 'started': the process is up and its herders joined their groups ("Kafka MirrorMaker started").
   */
  readonly readyWhen?: 'replicating' | 'started';
  readonly startTimeoutMs?: number;
  /** Lines added to mm2.properties after the ones made here, which they override. */
  readonly extraProperties?: Readonly<Record<string, string>>;
}

export interface MirrorMaker extends ProcessHandle {
  readonly configFile: string;
  readonly logFile: string;
  /** Starts it again with the same configuration; it resumes from the source offsets it committed in the target cluster. */
  start(): Promise<void>;
  /** SIGTERM is a clean stop (offsets committed); SIGKILL a crash. */
  stop(options?: { signal?: 'SIGTERM' | 'SIGKILL' }): Promise<void>;
}

export function mirrorJarsDir(): string {
  return join(kafkaCacheDir(), 'mirror-jars');
}

/** True when this machine can run MirrorMaker 2: a JVM, and the jars cached or Maven to fetch them. */
export function canRunMirrorMaker(): boolean {
  return canRunJars(mirrorJarsDir());
}

/** Copies connect-mirror and its runtime dependencies into the cache once. */
export function ensureMirrorMakerJars(): string {
  return fetchJarsOnce(join(here, 'mirror-pom.xml'), mirrorJarsDir(), `MirrorMaker 2 (connect-mirror ${kafkaVersion})`);
}

const escapeRegex = (topic: string) => topic.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function validate(options: Pick<MirrorMakerOptions, 'clusters' | 'flows' | 'runIn' | 'clusterSecurity'>): void {
  const aliases = Object.keys(options.clusters);
  for (const alias of Object.keys(options.clusterSecurity ?? {})) {
    if (!aliases.includes(alias)) throw new Error(`clusterSecurity names "${alias}", which is not one of the clusters (${aliases.join(', ')})`);
    const security = options.clusterSecurity![alias]!;
    if (!security.sasl && !security.clientCertificate) throw new Error(`clusterSecurity.${alias}: give a sasl login, a clientCertificate, or both`);
  }
  for (const alias of aliases) {
    // MM2 splits property names on '.' and '->': an alias holding either would misroute its settings.
    if (!/^[A-Za-z0-9_-]+$/.test(alias) || alias.includes('->')) throw new Error(`cluster alias "${alias}": use letters, digits, '_' and '-'`);
  }
  if (!aliases.includes(options.runIn)) throw new Error(`runIn "${options.runIn}" is not one of the clusters (${aliases.join(', ')})`);
  for (const flow of options.flows) {
    if (!aliases.includes(flow.source) || !aliases.includes(flow.target) || flow.source === flow.target) {
      throw new Error(`flow ${flow.source}->${flow.target}: source and target must be two different clusters of ${aliases.join(', ')}`);
    }
    if (flow.topics.length === 0) throw new Error(`flow ${flow.source}->${flow.target} names no topic`);
  }
  if (!options.flows.some((flow) => flow.target === options.runIn)) throw new Error(`no flow into ${options.runIn}: this process would have nothing to do`);
}

/**
 * The dedicated-mode configuration. Where each setting lands (Kafka 3.9.1, MirrorMakerConfig):
 * - `<source>-><target>.X` configures that flow's connectors; `consumer.X` there is the consumer
 *   that reads the source cluster (MirrorSourceTask).
 * - `<target>.X` configures the Connect worker of the herders writing into <target>; its
 *   `producer.X` is the producer that writes the mirrored records. A top-level `producer.X` is
 *   ignored by dedicated mode, and `<source>-><target>.producer.X` is not the worker's producer.
 * - Top-level `*.storage.*` settings reach the workers, the replication factors the connectors.
 */
export function mirrorMakerProperties(
  options: Pick<MirrorMakerOptions, 'clusters' | 'clusterSecurity' | 'flows' | 'runIn' | 'fetchMaxWaitMs' | 'tasks' | 'offsetFlushIntervalMs' | 'extraProperties'>,
): string {
  validate(options);
  const aliases = Object.keys(options.clusters);
  const lines = [
    `clusters = ${aliases.join(', ')}`,
    ...aliases.map((alias) => `${alias}.bootstrap.servers = ${options.clusters[alias]}`),
    ...securityProperties(options.clusterSecurity ?? {}),
    '',
  ];
  for (const source of aliases) {
    for (const target of aliases) {
      if (source === target) continue;
      const flow = options.flows.find((f) => f.source === source && f.target === target);
      lines.push(`${source}->${target}.enabled = ${flow ? 'true' : 'false'}`);
      if (!flow) continue;
      lines.push(
        `${source}->${target}.topics = ${flow.topics.map(escapeRegex).join(', ')}`,
        `${source}->${target}.consumer.fetch.max.wait.ms = ${options.fetchMaxWaitMs ?? 10_000}`,
        `${source}->${target}.consumer.fetch.min.bytes = 1`,
        // Records of an aborted transaction in the source region must not become facts in this one.
        `${source}->${target}.consumer.isolation.level = read_committed`,
        // Once a cut link returns, the source consumer connects and fetches again within 200 ms,
        // not after the client's default backoffs (each grown to a second during the cut): what was
        // recorded on the other side meanwhile (revocations above all) starts crossing at once.
        `${source}->${target}.consumer.reconnect.backoff.max.ms = 200`,
        `${source}->${target}.consumer.retry.backoff.max.ms = 200`,
      );
    }
  }
  lines.push('');
  for (const target of new Set(options.flows.map((flow) => flow.target))) {
    lines.push(
      `${target}.producer.linger.ms = 0`,
      `${target}.producer.acks = all`,
      `${target}.producer.enable.idempotence = true`,
      `${target}.offset.flush.interval.ms = ${options.offsetFlushIntervalMs ?? 1000}`,
      // After a crash the restarted worker waits for the dead one to leave the group: the
      // broker's minimum session (6 s) instead of Connect's 10 s. One worker per region, so there
      // is no other worker whose return deserves a wait before its tasks are handed out again.
      `${target}.session.timeout.ms = 6000`,
      `${target}.heartbeat.interval.ms = 2000`,
      `${target}.scheduled.rebalance.max.delay.ms = 5000`,
    );
  }
  lines.push(
    '',
    // <source>.<topic>: where a record came from stays visible, and a mirrored topic is never mirrored back.
    'replication.policy.class = org.apache.kafka.connect.mirror.DefaultReplicationPolicy',
    // One broker per region: every topic MM2 makes has one replica.
    'replication.factor = 1',
    'checkpoints.topic.replication.factor = 1',
    'heartbeats.topic.replication.factor = 1',
    'offset.storage.replication.factor = 1',
    'status.storage.replication.factor = 1',
    'config.storage.replication.factor = 1',
    // New topics and partitions in the source are mirrored within 5 s, not 10 minutes.
    'refresh.topics.interval.seconds = 5',
    // Retention and cleanup policy follow the source topic.
    'sync.topic.configs.enabled = true',
    'sync.topic.configs.interval.seconds = 60',
    // ACLs stay each region's own: who may write a region's topics (its relay) is not who may
    // write the mirrored copies (MM2), and a copied ACL could let one region's principal into another.
    'sync.topic.acls.enabled = false',
    // Each region's MM2 writes a heartbeat into its own cluster every second; the other region
    // mirrors it as <region>.heartbeats, a way to see that a link carries data.
    'emit.heartbeats.enabled = true',
    'emit.heartbeats.interval.seconds = 1',
    // Tessera's consumers rebuild their state from the retained topics, so there are no consumer
    // group offsets to translate: no checkpoints, and no offset syncs, which would be the one
    // thing this process writes into the source region. (With offset syncs off, MM2 refuses any
    // offset-syncs.* setting; and it logs once per start that it "Failed to configure
    // MirrorCheckpointConnector", which is this choice, not a fault.)
    'emit.checkpoints.enabled = false',
    'sync.group.offsets.enabled = false',
    'refresh.groups.enabled = false',
    'emit.offset-syncs.enabled = false',
    `tasks.max = ${options.tasks ?? 12}`,
    '',
  );
  for (const [key, value] of Object.entries(options.extraProperties ?? {})) lines.push(`${key} = ${value}`);
  return `${lines.join('\n')}\n`;
}

const loginModules = {
  'SCRAM-SHA-512': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  'SCRAM-SHA-256': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  PLAIN: 'org.apache.kafka.common.security.plain.PlainLoginModule',
} as const;

/** `${dir:<folder>:<file>}`: the file's content, read by DirectoryConfigProvider when MM2 starts. */
const fileContent = (file: string) => `\${dir:${dirname(resolve(file))}:${basename(file)}}`;

/**
 * Cluster-level settings (`<alias>.X`) reach every client MM2 makes for that cluster: the
 * source consumers and admin of a flow, the target's Connect worker, producer and admin.
 */
function securityProperties(clusterSecurity: Readonly<Record<string, MirrorClusterSecurity>>): string[] {
  const secured = Object.entries(clusterSecurity);
  if (secured.length === 0) return [];
  const lines = ['config.providers = dir', 'config.providers.dir.class = org.apache.kafka.common.config.provider.DirectoryConfigProvider'];
  for (const [alias, security] of secured) {
    lines.push(`${alias}.security.protocol = ${security.sasl ? 'SASL_SSL' : 'SSL'}`, `${alias}.ssl.endpoint.identification.algorithm = https`);
    if (security.caFile) lines.push(`${alias}.ssl.truststore.type = PEM`, `${alias}.ssl.truststore.location = ${resolve(security.caFile)}`);
    if (security.sasl) {
      const { mechanism, username, passwordFile } = security.sasl;
      if (!/^[^"\\\s]+$/.test(username)) throw new Error(`clusterSecurity.${alias}: the username may not hold quotes, backslashes or spaces`);
      lines.push(`${alias}.sasl.mechanism = ${mechanism}`, `${alias}.sasl.jaas.config = ${loginModules[mechanism]} required username="${username}" password="${fileContent(passwordFile)}";`);
    }
    if (security.clientCertificate) {
      lines.push(
        `${alias}.ssl.keystore.type = PEM`,
        `${alias}.ssl.keystore.certificate.chain = ${fileContent(security.clientCertificate.certFile)}`,
        `${alias}.ssl.keystore.key = ${fileContent(security.clientCertificate.keyFile)}`,
      );
    }
  }
  return lines;
}

const log4jProperties = consoleLog4j(
  '[%d] %p %X{connector.context}%m (%c)%n',
  'log4j.logger.org.reflections=ERROR',
  // Every task commits its offsets each offset.flush.interval.ms, and says so at INFO.
  'log4j.logger.org.apache.kafka.connect.runtime.WorkerSourceTask=WARN',
  // A partitioned link makes the clients log every failed reconnect; one line a second per client is enough to see it.
  'log4j.logger.org.apache.kafka.clients.NetworkClient=ERROR',
);

/** MirrorSourceTask logs this once it has its partitions and is about to poll them (Kafka 3.9.1). */
const replicatingLine = (source: string, target: string) => new RegExp(`replicating \\d+ topic-partitions ${escapeRegex(source)}->${escapeRegex(target)}: `);
const startedLine = 'Kafka MirrorMaker started';

export async function startMirrorMaker(options: MirrorMakerOptions): Promise<MirrorMaker> {
  const properties = mirrorMakerProperties(options);
  const jars = ensureMirrorMakerJars();
  const folder = workFolder(options.workDir, 'tessera-mm2-');
  const workDir = folder.dir;
  const configFile = join(workDir, 'mm2.properties');
  const logFile = join(workDir, 'mirror-maker.log');
  writeFileSync(configFile, properties);
  writeFileSync(join(workDir, 'log4j.properties'), log4jProperties);
  const ownerPid = options.ownerPid ?? process.pid;
  const startTimeoutMs = options.startTimeoutMs ?? 90_000;
  const readyWhen = options.readyWhen ?? 'replicating';
  const inbound = options.flows.filter((flow) => flow.target === options.runIn);
  const args = [
    ...testJvmArgs(jars, options.heapMb ?? 256, join(workDir, 'log4j.properties')),
    'org.apache.kafka.connect.mirror.MirrorMaker',
    configFile,
    '--clusters',
    options.runIn,
  ];

  const owned = new OwnedProcess(ownerPid);

  const ready = (log: string): boolean =>
    readyWhen === 'started' ? log.includes(startedLine) : inbound.every((flow) => replicatingLine(flow.source, flow.target).test(log));

  const start = async (): Promise<void> => {
    if (owned.running) return;
    await owned.launch('java', args, {
      what: 'MirrorMaker 2',
      logFile,
      timeoutMs: startTimeoutMs,
      state: readyWhen,
      check: (logSinceSpawn) => ready(logSinceSpawn()),
    });
  };

  const stop = ({ signal = 'SIGTERM' }: { signal?: 'SIGTERM' | 'SIGKILL' } = {}): Promise<void> => owned.stop(signal);

  await start();
  return { ...processHandle(owned, folder, stop), configFile, logFile, start, stop };
}

function usage(): never {
  console.error(`usage: npx tsx infra/kafka/mirror-maker.ts <command> ...
  fetch   fetch MirrorMaker 2's jars into ${mirrorJarsDir()}
  run --clusters a=HOST:PORT,b=HOST:PORT --flow a->b=TOPIC[,TOPIC...] [--flow ...] --run-in b [--dir DIR]
          run MM2 in the foreground for the flows into --run-in; Ctrl-C stops it (and removes its folder unless --dir)`);
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const flags = (name: string) => rest.flatMap((arg, index) => (arg === `--${name}` && rest[index + 1] !== undefined ? [rest[index + 1]!] : []));
  switch (command) {
    case 'fetch':
      console.log(ensureMirrorMakerJars());
      return;
    case 'run': {
      const clusters = Object.fromEntries(
        (flags('clusters')[0] ?? '').split(',').filter(Boolean).map((entry) => {
          const [alias, bootstrap] = entry.split('=');
          if (!alias || !bootstrap) usage();
          return [alias, bootstrap];
        }),
      );
      const flows = flags('flow').map((entry) => {
        const match = /^([^-=]+)->([^=]+)=(.+)$/.exec(entry);
        if (!match) usage();
        return { source: match[1]!, target: match[2]!, topics: match[3]!.split(',') };
      });
      const runIn = flags('run-in')[0];
      if (!runIn || flows.length === 0) usage();
      const mirrorMaker = await startMirrorMaker({ clusters, flows, runIn, workDir: flags('dir')[0] });
      console.error(`MirrorMaker 2 replicating into ${runIn}; config ${mirrorMaker.configFile}; log ${mirrorMaker.logFile}`);
      destroyOnSignal(mirrorMaker);
      return;
    }
    default:
      usage();
  }
}

runAsCommand(import.meta.url, main);
