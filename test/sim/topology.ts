import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { generate } from 'selfsigned';
import { grantAcls } from '../../infra/kafka/acls.js';
import { startKafkaBroker, type KafkaBroker } from '../../infra/kafka/kafka-broker.js';
import { startMirrorMaker, type MirrorMaker } from '../../infra/kafka/mirror-maker.js';
import { startToxiproxy, type Toxiproxy } from '../../infra/toxiproxy/toxiproxy.js';
import { freePort, startTessera, type TesseraProcess } from '../support/tessera-process.js';
import { keepAliveClient, type KeepAliveClient } from './keep-alive-client.js';

export type RegionName = 'a' | 'b';
const other = (region: RegionName): RegionName => (region === 'a' ? 'b' : 'a');

export interface Region {
  readonly name: RegionName;
  /** The region's all-in-one: a new process after stopServer/startServer. */
  readonly server: TesseraProcess;
  readonly http: KeepAliveClient;
  /** b's count of mirrored events dropped as redeliveries, from its /metrics. */
  mirroredDuplicates(): Promise<number>;
  /** One sample of /metrics (`name{labels}` as exposed), NaN when absent. */
  metric(series: string): Promise<number>;
}

/** A raw message of a topic: its key, value and headers as bytes on the wire. */
export interface TopicMessage {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer | string | undefined>>;
}

/** A second all-in-one in region b, on its own log and its own link to a (cut apart from the rest). */
export interface ExtraProcess {
  readonly server: TesseraProcess;
  readonly http: KeepAliveClient;
  metric(series: string): Promise<number>;
  /** Its link to a only: disabled (refused, cut) or enabled. */
  setLinkToA(enabled: boolean): Promise<void>;
  stop(): Promise<void>;
}

export interface Topology {
  readonly a: Region;
  readonly b: Region;
  /** The regions' certificate, for clients of their own. */
  readonly ca: Buffer;
  /** Every inter-region link (issuer to issuer, MM2 to the remote broker): this much each way. 0 removes it. */
  setLatency(ms: number): Promise<void>;
  /** Every inter-region link down (Toxiproxy's proxies disabled: connections refused and cut). */
  partition(): Promise<void>;
  heal(): Promise<void>;
  /** One link answers nothing (Toxiproxy's timeout toxic: data stops, nothing is closed), or works again. */
  blackhole(link: 'issuer-a' | 'issuer-b', on: boolean): Promise<void>;
  killMirrorMaker(region: RegionName): Promise<void>;
  startMirrorMaker(region: RegionName): Promise<void>;
  stopBroker(region: RegionName): Promise<void>;
  startBroker(region: RegionName): Promise<void>;
  /** The region's all-in-one stopped (SIGTERM): the region is lost. */
  stopServer(region: RegionName): Promise<void>;
  /** Started again on the same data folder and settings; resolves once it is listening. */
  startServer(region: RegionName): Promise<void>;
  /** Resolves once the region's /readyz answers 200. */
  untilReady(region: RegionName, timeoutMs: number): Promise<void>;
  /** Every message of a topic in a region's Kafka, read as its admin user. */
  topicMessages(region: RegionName, topic: string): Promise<TopicMessage[]>;
  /** How a downstream service in a region reaches its Kafka (here as the broker's admin user): `createKafkaFeed`'s options. */
  kafkaClient(region: RegionName): { readonly brokers: string; readonly ssl: { readonly ca: string }; readonly sasl: { readonly mechanism: 'scram-sha-512'; readonly username: string; readonly password: string } };
  /** The CLI against a region's data folder with its settings: exit code and output. */
  cli(region: RegionName, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Another all-in-one in region b (its own data folder, same broker), started with `nodeArgs`. */
  startExtraInB(options: { readonly nodeArgs: readonly string[] }): Promise<ExtraProcess>;
  stop(): Promise<void>;
}

const heapMb = 256;
/** What each region's relay publishes and the other region's MirrorMaker 2 copies. */
const mirroredTopics = ['tessera.revocations', 'tessera.accounts', 'tessera.families'];

/** A broker started with `security`, which the simulation always asks for. */
function securityOf(broker: KafkaBroker): NonNullable<KafkaBroker['security']> {
  if (!broker.security) throw new Error('the simulation runs its brokers secured');
  return broker.security;
}

/** One sample of a server's /metrics: `series` is the name with its labels as exposed; NaN when absent. */
async function metricOf(server: TesseraProcess, series: string): Promise<number> {
  const text = (await server.adminRequest('/metrics')).text;
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
}

/** Every message of a topic, from its start to where it ends now, as the broker's admin user. */
async function readTopic(security: NonNullable<KafkaBroker['security']>, bootstrap: string, topic: string): Promise<TopicMessage[]> {
  const kafka = new kafkajs.Kafka({
    clientId: 'tessera-sim-reader',
    brokers: [bootstrap],
    ssl: { ca: readFileSync(security.caFile, 'utf8') },
    sasl: { mechanism: 'scram-sha-512', username: security.admin.username, password: security.admin.password },
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const left = new Map(ends.filter((end) => BigInt(end.high) > BigInt(end.low)).map((end) => [end.partition, BigInt(end.high)]));
  const messages: TopicMessage[] = [];
  if (left.size === 0) return messages;
  const consumer = kafka.consumer({ groupId: `tessera-sim-reader-${randomBytes(6).toString('hex')}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([name, value]) => [name, Array.isArray(value) ? Buffer.concat(value.map((part) => Buffer.from(part))) : value]));
          messages.push({ key: message.key, value: message.value, headers });
          if (BigInt(message.offset) + 1n >= (left.get(partition) ?? 0n)) left.delete(partition);
          if (left.size === 0) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return messages;
}

/** /readyz on the admin listener until 200: a region is ready once MM2 has made the other region's topics here and they are read. */
async function untilReady(server: TesseraProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const answer = await server.adminRequest('/readyz').catch((error: unknown) => ({ status: 0, text: String(error) }));
    if (answer.status === 200) return;
    last = answer.text;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`not ready within ${timeoutMs} ms: ${last}`);
}

/**
 * Two regions on this machine, wired as docs/multi-region.md describes: in each, a Kafka broker,
 * an all-in-one on its own SQLite folder (its relay publishing to the local broker) and MirrorMaker 2
 * pulling the other region's topics into the local broker; Toxiproxy on every link between them.
 * a is the control region: accounts are created there.
 */
export async function startTopology(log: (line: string) => void): Promise<Topology> {
  const root = mkdtempSync(join(tmpdir(), 'tessera-sim-regions-'));
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((error: unknown) => log(`stop failed: ${String(error)}`));
    // SIM_KEEP_FILES=1 keeps every process's log and data folder, to chase a failure.
    if (process.env.SIM_KEEP_FILES === '1') log(`kept: ${root}`);
    else rmSync(root, { recursive: true, force: true });
  };
  try {
    const toxiproxy: Toxiproxy = await startToxiproxy({ ownerPid: process.pid });
    stops.push(() => toxiproxy.stop());
    log(`toxiproxy on ${toxiproxy.apiUrl}`);

    // Kafka, secured as production runs it: SASL_SSL (SCRAM-SHA-512) and ACLs, nothing allowed that
    // no ACL allows. Each broker's second listener is what the other region's MM2 reaches, through a proxy.
    const remoteKafkaPort = { a: await freePort(), b: await freePort() };
    const brokers = {} as Record<RegionName, KafkaBroker>;
    for (const region of ['a', 'b'] as const) {
      brokers[region] = await startKafkaBroker({
        workDir: join(root, `kafka-${region}`),
        heapMb,
        ownerPid: process.pid,
        remoteListener: { advertisedPort: remoteKafkaPort[region] },
        security: { users: { tessera: ['SCRAM-SHA-512'], mirror: ['SCRAM-SHA-512'] } },
      });
      stops.push(() => brokers[region].destroy());
      // Each topic by its name, as docs/kafka.md lists them: nothing allowed that no ACL allows.
      await grantAcls(securityOf(brokers[region]), [
        // The region's own processes: its relay writes (and creates) its topics; its followers read the mirrored copies.
        ...mirroredTopics.map((topic) => ({ principal: 'User:tessera', resource: 'topic' as const, name: topic, operations: ['READ', 'WRITE', 'DESCRIBE', 'CREATE', 'DESCRIBE_CONFIGS'] as const })),
        ...mirroredTopics.map((topic) => ({ principal: 'User:tessera', resource: 'topic' as const, name: `${other(region)}.${topic}`, operations: ['READ', 'DESCRIBE'] as const })),
        { principal: 'User:tessera', resource: 'group', name: 'tessera-', prefixed: true, operations: ['READ', 'DESCRIBE'] },
        // The other region's MirrorMaker 2 only reads this region's topics and their settings.
        ...mirroredTopics.map((topic) => ({ principal: 'User:mirror', resource: 'topic' as const, name: topic, operations: ['READ', 'DESCRIBE', 'DESCRIBE_CONFIGS'] as const })),
      ]);
      await toxiproxy.createProxy({ name: `kafka-${region}`, listen: `127.0.0.1:${remoteKafkaPort[region]}`, upstream: `127.0.0.1:${brokers[region].remotePort!}` });
      log(`region ${region}: Kafka on ${brokers[region].bootstrap}, reached from the other region through 127.0.0.1:${remoteKafkaPort[region]}`);
    }

    // Issuers: one certificate for both, trusted by file, since each must trust the other before either starts.
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
    });
    const certFile = join(root, 'regions.crt');
    writeFileSync(certFile, pems.cert);
    const ports = { a: await freePort(), b: await freePort() };
    const peerPorts = { a: await freePort(), b: await freePort() };
    for (const region of ['a', 'b'] as const) {
      await toxiproxy.createProxy({ name: `issuer-${region}`, listen: `127.0.0.1:${peerPorts[region]}`, upstream: `127.0.0.1:${ports[region]}` });
    }
    const secret = randomBytes(32).toString('base64url');
    const servers = {} as Record<RegionName, TesseraProcess>;
    /** A data folder for an all-in-one: the regions' certificate, and (but in a, which makes it) a's secret-hashing key. */
    const provision = (dataDir: string, copyHashingKey: boolean) => {
      mkdirSync(join(dataDir, 'tls'), { recursive: true, mode: 0o700 });
      writeFileSync(join(dataDir, 'tls', 'self-signed.key'), pems.private, { mode: 0o600 });
      writeFileSync(join(dataDir, 'tls', 'self-signed.crt'), pems.cert, { mode: 0o644 });
      if (copyHashingKey) {
        // One secret-hashing key for every region, copied when the region is provisioned (decision 0013).
        mkdirSync(join(dataDir, 'keys'), { recursive: true, mode: 0o700 });
        copyFileSync(join(root, 'tessera-a', 'keys', 'secret-hashing.key'), join(dataDir, 'keys', 'secret-hashing.key'));
      }
    };
    const envOf = (region: RegionName, port: number, peerOrigin: string): Record<string, string> => ({
      TESSERA_REGION: region,
      TESSERA_PORT: String(port),
      TESSERA_KAFKA_BROKERS: brokers[region].bootstrap,
      TESSERA_KAFKA_TLS_CA_FILE: securityOf(brokers[region]).caFile,
      TESSERA_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      TESSERA_KAFKA_SASL_USERNAME: 'tessera',
      TESSERA_KAFKA_SASL_PASSWORD_FILE: securityOf(brokers[region]).users.tessera!.passwordFile,
      TESSERA_PEER_REGIONS: `${other(region)}=${peerOrigin}`,
      TESSERA_PEER_SECRET: secret,
      // a writes accounts; `tessera regions promote-control` moves that (docs/decisions/0018).
      TESSERA_CONTROL_REGION: 'a',
      NODE_EXTRA_CA_CERTS: certFile,
      TESSERA_LOG_LEVEL: process.env.SIM_LOG_LEVEL ?? 'warn',
    });
    const serverEnv = {} as Record<RegionName, Record<string, string>>;
    const startServer = async (region: RegionName) => {
      // Not ready until MM2 has made the other region's topics here (it starts after the first start).
      servers[region] = await startTessera(serverEnv[region], { dataDir: join(root, `tessera-${region}`), keepData: true, until: 'listening', logFile: join(root, `tessera-${region}.log`) });
      // A region started again keeps its addresses, as a restarted server does: the first start's
      // admin port (the system's choice) is pinned for the next ones, which scenarios reach.
      const adminUrl = servers[region].adminUrl;
      if (adminUrl !== undefined) serverEnv[region] = { ...serverEnv[region], TESSERA_ADMIN_PORT: new URL(adminUrl).port };
    };
    for (const region of ['a', 'b'] as const) {
      provision(join(root, `tessera-${region}`), region === 'b');
      serverEnv[region] = envOf(region, ports[region], `https://localhost:${peerPorts[other(region)]}`);
      await startServer(region);
      stops.push(() => servers[region].stop());
      log(`region ${region}: all-in-one on https://localhost:${ports[region]}, reached from the other region through 127.0.0.1:${peerPorts[region]}`);
    }

    // MirrorMaker 2 in each destination region, pulling from the other region's broker through its proxy.
    const mirrorMakers = {} as Record<RegionName, MirrorMaker>;
    for (const region of ['a', 'b'] as const) {
      const source = other(region);
      const [sourceSecurity, targetSecurity] = [securityOf(brokers[source]), securityOf(brokers[region])];
      mirrorMakers[region] = await startMirrorMaker({
        clusters: { [source]: `127.0.0.1:${remoteKafkaPort[source]}`, [region]: brokers[region].bootstrap },
        clusterSecurity: {
          [source]: { caFile: sourceSecurity.caFile, sasl: { mechanism: 'SCRAM-SHA-512', username: 'mirror', passwordFile: sourceSecurity.users.mirror!.passwordFile } },
          [region]: { caFile: targetSecurity.caFile, sasl: { mechanism: 'SCRAM-SHA-512', username: targetSecurity.admin.username, passwordFile: targetSecurity.admin.passwordFile } },
        },
        flows: [{ source, target: region, topics: mirroredTopics }],
        runIn: region,
        workDir: join(root, `mm2-${region}`),
        heapMb,
        ownerPid: process.pid,
      });
      stops.push(() => mirrorMakers[region].destroy());
      log(`region ${region}: MirrorMaker 2 pulling ${source}'s topics`);
    }
    for (const region of ['a', 'b'] as const) await untilReady(servers[region], 180_000);

    const ca = readFileSync(certFile);
    const regions = {} as Record<RegionName, Region>;
    for (const region of ['a', 'b'] as const) {
      const http = keepAliveClient(`https://localhost:${ports[region]}`, ca);
      stops.push(async () => http.close());
      regions[region] = {
        name: region,
        get server() {
          return servers[region];
        },
        http,
        mirroredDuplicates: () => metricOf(servers[region], 'tessera_mirrored_events_duplicate_total'),
        metric: (series) => metricOf(servers[region], series),
      };
    }
    const links = ['issuer-a', 'issuer-b', 'kafka-a', 'kafka-b'];
    return {
      a: regions.a,
      b: regions.b,
      ca,
      setLatency: async (ms) => {
        for (const link of links) await toxiproxy.setLatency(link, ms);
      },
      partition: async () => {
        for (const link of links) await toxiproxy.setEnabled(link, false);
      },
      heal: async () => {
        for (const link of links) await toxiproxy.setEnabled(link, true);
      },
      blackhole: async (link, on) => {
        if (on) await toxiproxy.addToxic(link, { name: 'blackhole', type: 'timeout', stream: 'upstream', attributes: { timeout: 0 } });
        else await toxiproxy.removeToxic(link, 'blackhole');
      },
      killMirrorMaker: (region) => mirrorMakers[region].stop({ signal: 'SIGKILL' }),
      startMirrorMaker: (region) => mirrorMakers[region].start(),
      stopBroker: (region) => brokers[region].stop({ signal: 'SIGTERM' }),
      startBroker: (region) => brokers[region].start(),
      stopServer: async (region) => {
        servers[region].signal('SIGTERM');
        await servers[region].exited;
      },
      startServer,
      untilReady: (region, timeoutMs) => untilReady(servers[region], timeoutMs),
      topicMessages: (region, topic) => readTopic(securityOf(brokers[region]), brokers[region].bootstrap, topic),
      kafkaClient: (region) => {
        const security = securityOf(brokers[region]);
        return { brokers: brokers[region].bootstrap, ssl: { ca: readFileSync(security.caFile, 'utf8') }, sasl: { mechanism: 'scram-sha-512', username: security.admin.username, password: security.admin.password } };
      },
      cli: async (region, args) => {
        try {
          const { stdout, stderr } = await servers[region].tessera([...args]);
          return { code: 0, stdout, stderr };
        } catch (error) {
          const failed = error as { code?: number; stdout?: string; stderr?: string };
          return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
        }
      },
      startExtraInB: async ({ nodeArgs }) => {
        const dataDir = join(root, `tessera-b-extra-${Date.now()}`);
        provision(dataDir, true);
        const name = `issuer-a-extra-${Date.now()}`;
        const link = await toxiproxy.createProxy({ name, listen: '127.0.0.1:0', upstream: `127.0.0.1:${ports.a}` });
        const port = await freePort();
        const server = await startTessera(envOf('b', port, `https://localhost:${link.listenPort}`), { dataDir, until: 'listening', logFile: join(root, 'tessera-b-extra.log'), nodeArgs: [...nodeArgs] });
        await untilReady(server, 120_000);
        const http = keepAliveClient(`https://localhost:${port}`, ca);
        return {
          server,
          http,
          metric: (series) => metricOf(server, series),
          setLinkToA: async (enabled) => {
            await toxiproxy.setEnabled(name, enabled);
          },
          stop: async () => {
            http.close();
            await server.stop();
          },
        };
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
