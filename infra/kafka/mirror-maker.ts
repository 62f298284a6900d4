/**
 * MirrorMaker 2 without Docker: `connect-mirror` from the same Kafka 3.9.1 distribution on
 * Maven Central as the broker (infra/kafka/kafka-broker.ts), run on the local JVM in dedicated
 * mode, one process per destination region (pull: a sick source region is never pushed into).
 *
 * As a library: `startMirrorMaker()` (`npm run sim:regions`).
 * As a command:  npx tsx infra/kafka/mirror-maker.ts fetch
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kafkaCacheDir, kafkaVersion, tail, watchOwner } from './kafka-broker.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface MirrorFlow {
  /** Cluster aliases; the default replication policy names a mirrored topic `<source>.<topic>`. */
  readonly source: string;
  readonly target: string;
  /** Exact topic names to mirror. */
  readonly topics: readonly string[];
}

export interface MirrorMakerOptions {
  /** Alias → bootstrap address, as this MM2 reaches each cluster (a remote one through its proxy). */
  readonly clusters: Readonly<Record<string, string>>;
  readonly flows: readonly MirrorFlow[];
  /** The cluster this process serves (`--clusters`): only flows into it run here. */
  readonly runIn: string;
  readonly workDir?: string;
  readonly heapMb?: number;
  /** Pid whose death kills MM2. Default this process. */
  readonly ownerPid?: number;
}

export interface MirrorMaker {
  readonly workDir: string;
  readonly logFile: string;
  readonly pid: () => number | undefined;
  readonly running: () => boolean;
  /** Starts it again with the same configuration; it resumes from the offsets it committed in the target cluster. */
  start(): Promise<void>;
  /** SIGTERM is a clean stop; SIGKILL a crash. */
  stop(options?: { signal?: 'SIGTERM' | 'SIGKILL' }): Promise<void>;
  destroy(): Promise<void>;
}

export function mirrorJarsDir(): string {
  return join(kafkaCacheDir(), 'mirror-jars');
}

/** Copies connect-mirror and its runtime dependencies into the cache once, atomically, like the broker's jars. */
export function ensureMirrorMakerJars(): string {
  const jars = mirrorJarsDir();
  if (existsSync(join(jars, '.complete'))) return jars;
  const cache = kafkaCacheDir();
  mkdirSync(cache, { recursive: true });
  const scratch = mkdtempSync(join(cache, 'fetch-mirror-'));
  const result = spawnSync(
    'mvn',
    ['-B', '-q', '-f', join(here, 'mirror-pom.xml'), 'dependency:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${join(scratch, 'jars')}`],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (result.status !== 0) {
    rmSync(scratch, { recursive: true, force: true });
    throw new Error(`mvn could not fetch MirrorMaker 2 (connect-mirror ${kafkaVersion}):\n${result.stdout}\n${result.stderr}`);
  }
  writeFileSync(join(scratch, 'jars', '.complete'), `connect-mirror ${kafkaVersion}\n`);
  try {
    renameSync(join(scratch, 'jars'), jars);
  } catch (error) {
    // Another fetch finished first: its jars are as good as ours.
    if (!existsSync(join(jars, '.complete'))) throw error;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return jars;
}

const escapeRegex = (topic: string) => topic.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The dedicated-mode configuration: every internal topic with one replica (one broker per region here). */
export function mirrorMakerProperties(options: Pick<MirrorMakerOptions, 'clusters' | 'flows'>): string {
  const aliases = Object.keys(options.clusters);
  const lines = [
    `clusters = ${aliases.join(', ')}`,
    ...aliases.map((alias) => `${alias}.bootstrap.servers = ${options.clusters[alias]}`),
  ];
  for (const source of aliases) {
    for (const target of aliases) {
      if (source === target) continue;
      const flow = options.flows.find((f) => f.source === source && f.target === target);
      lines.push(`${source}->${target}.enabled = ${flow ? 'true' : 'false'}`);
      if (flow) lines.push(`${source}->${target}.topics = ${flow.topics.map(escapeRegex).join('|')}`);
    }
  }
  lines.push(
    'replication.policy.class = org.apache.kafka.connect.mirror.DefaultReplicationPolicy',
    'replication.factor = 1',
    'checkpoints.topic.replication.factor = 1',
    'heartbeats.topic.replication.factor = 1',
    'offset-syncs.topic.replication.factor = 1',
    'offset.storage.replication.factor = 1',
    'status.storage.replication.factor = 1',
    'config.storage.replication.factor = 1',
    // Topics are mirrored as soon as they appear, not up to 10 minutes later.
    'refresh.topics.interval.seconds = 5',
    'refresh.groups.enabled = false',
    'sync.topic.acls.enabled = false',
    // Tessera's consumers rebuild from the retained topic (decision 0008): no group offsets to translate.
    'emit.checkpoints.enabled = false',
    'sync.group.offsets.enabled = false',
    'tasks.max = 1',
    // Revocations are latency-bound: fetch answers as soon as a record is there, and send at once.
    'consumer.fetch.max.wait.ms = 20',
    'consumer.fetch.min.bytes = 1',
    'producer.linger.ms = 0',
    'producer.acks = all',
    'producer.enable.idempotence = true',
    '',
  );
  return lines.join('\n');
}

const log4jProperties = [
  'log4j.rootLogger=INFO, stdout',
  'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
  'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
  'log4j.logger.org.apache.kafka.clients=WARN',
  'log4j.logger.org.reflections=ERROR',
  '',
].join('\n');

export async function startMirrorMaker(options: MirrorMakerOptions): Promise<MirrorMaker> {
  const jars = ensureMirrorMakerJars();
  const ownsWorkDir = options.workDir === undefined;
  const workDir = resolve(options.workDir ?? mkdtempSync(join(tmpdir(), 'tessera-mm2-')));
  mkdirSync(workDir, { recursive: true });
  const configFile = join(workDir, 'mm2.properties');
  const logFile = join(workDir, 'mirror-maker.log');
  writeFileSync(configFile, mirrorMakerProperties(options));
  writeFileSync(join(workDir, 'log4j.properties'), log4jProperties);
  const ownerPid = options.ownerPid ?? process.pid;
  const args = [
    `-Xmx${options.heapMb ?? 256}m`,
    '-Xms64m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-XX:+ExitOnOutOfMemoryError',
    `-Dlog4j.configuration=file:${join(workDir, 'log4j.properties')}`,
    '-cp',
    `${jars}/*`,
    'org.apache.kafka.connect.mirror.MirrorMaker',
    configFile,
    '--clusters',
    options.runIn,
  ];

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const onProcessExit = () => child?.kill('SIGKILL');

  const start = async (): Promise<void> => {
    if (child) return;
    const logFd = openSync(logFile, 'a');
    const spawned = spawn('java', args, { stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    child = spawned;
    let exitCode: number | null | undefined;
    exited = new Promise<void>((resolveExit) => {
      spawned.once('exit', (code, signal) => {
        exitCode = code ?? (signal ? -1 : 0);
        if (child === spawned) child = undefined;
        resolveExit();
      });
    });
    process.once('exit', onProcessExit);
    if (spawned.pid !== undefined) watchOwner(ownerPid, spawned.pid);
    // MM2 has no readiness signal of its own; what matters (the mirrored topic, filled) is checked by its users.
    // A bad configuration or classpath fails within a couple of seconds, so that much is waited out.
    await new Promise((r) => setTimeout(r, 2_000));
    if (exitCode !== undefined) throw new Error(`MirrorMaker 2 exited (${exitCode}) at start; log ${logFile}:\n${tail(logFile)}`);
  };

  const stop = async ({ signal = 'SIGTERM' }: { signal?: 'SIGTERM' | 'SIGKILL' } = {}): Promise<void> => {
    const running = child;
    if (!running) return;
    running.kill(signal);
    const forced = setTimeout(() => running.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(forced);
    process.removeListener('exit', onProcessExit);
  };

  await start();
  return {
    workDir,
    logFile,
    pid: () => child?.pid,
    running: () => child !== undefined,
    start,
    stop,
    destroy: async () => {
      await stop();
      if (ownsWorkDir) rmSync(workDir, { recursive: true, force: true });
    },
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === 'fetch') console.log(ensureMirrorMakerJars());
  else {
    console.error('usage: npx tsx infra/kafka/mirror-maker.ts fetch   (copies connect-mirror and its dependencies into the cache)');
    process.exit(2);
  }
}
