import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  readonly server: TesseraProcess;
  readonly http: KeepAliveClient;
  /** b's count of mirrored events dropped as redeliveries, from its /metrics. */
  mirroredDuplicates(): Promise<number>;
}

export interface Topology {
  readonly a: Region;
  readonly b: Region;
  /** Every inter-region link (issuer to issuer, MM2 to the remote broker): this much each way. 0 removes it. */
  setLatency(ms: number): Promise<void>;
  /** Every inter-region link down (Toxiproxy's proxies disabled: connections refused and cut). */
  partition(): Promise<void>;
  heal(): Promise<void>;
  killMirrorMaker(region: RegionName): Promise<void>;
  startMirrorMaker(region: RegionName): Promise<void>;
  stopBroker(region: RegionName): Promise<void>;
  startBroker(region: RegionName): Promise<void>;
  stop(): Promise<void>;
}

const heapMb = 256;

/** A broker started with `security`, which the simulation always asks for. */
function securityOf(broker: KafkaBroker): NonNullable<KafkaBroker['security']> {
  if (!broker.security) throw new Error('the simulation runs its brokers secured');
  return broker.security;
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
    rmSync(root, { recursive: true, force: true });
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
      await grantAcls(securityOf(brokers[region]), [
        // The region's own processes: its relay writes tessera.*; its followers read it and the mirrored copies.
        { principal: 'User:tessera', resource: 'topic', name: 'tessera.', prefixed: true, operations: ['READ', 'WRITE', 'DESCRIBE', 'CREATE', 'DESCRIBE_CONFIGS'] },
        { principal: 'User:tessera', resource: 'topic', name: `${other(region)}.tessera.`, prefixed: true, operations: ['READ', 'DESCRIBE'] },
        { principal: 'User:tessera', resource: 'group', name: 'tessera-', prefixed: true, operations: ['READ', 'DESCRIBE'] },
        // The other region's MirrorMaker 2 only reads this region's topics and their settings.
        { principal: 'User:mirror', resource: 'topic', name: 'tessera.', prefixed: true, operations: ['READ', 'DESCRIBE', 'DESCRIBE_CONFIGS'] },
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
    for (const region of ['a', 'b'] as const) {
      const dataDir = join(root, `tessera-${region}`);
      mkdirSync(join(dataDir, 'tls'), { recursive: true, mode: 0o700 });
      writeFileSync(join(dataDir, 'tls', 'self-signed.key'), pems.private, { mode: 0o600 });
      writeFileSync(join(dataDir, 'tls', 'self-signed.crt'), pems.cert, { mode: 0o644 });
      if (region === 'b') {
        // One secret-hashing key for every region, copied when the region is provisioned (decision 0013).
        mkdirSync(join(dataDir, 'keys'), { recursive: true, mode: 0o700 });
        copyFileSync(join(root, 'tessera-a', 'keys', 'secret-hashing.key'), join(dataDir, 'keys', 'secret-hashing.key'));
      }
      servers[region] = await startTessera(
        {
          TESSERA_REGION: region,
          TESSERA_PORT: String(ports[region]),
          TESSERA_KAFKA_BROKERS: brokers[region].bootstrap,
          TESSERA_KAFKA_TLS_CA_FILE: securityOf(brokers[region]).caFile,
          TESSERA_KAFKA_SASL_MECHANISM: 'scram-sha-512',
          TESSERA_KAFKA_SASL_USERNAME: 'tessera',
          TESSERA_KAFKA_SASL_PASSWORD_FILE: securityOf(brokers[region]).users.tessera!.passwordFile,
          TESSERA_PEER_REGIONS: `${other(region)}=https://localhost:${peerPorts[other(region)]}`,
          TESSERA_PEER_SECRET: secret,
          NODE_EXTRA_CA_CERTS: certFile,
          TESSERA_LOG_LEVEL: 'warn',
        },
        // Not ready until MM2 has made the other region's topics here: started below.
        { dataDir, until: 'listening', logFile: join(root, `tessera-${region}.log`) },
      );
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
        flows: [{ source, target: region, topics: ['tessera.revocations', 'tessera.accounts'] }],
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
        server: servers[region],
        http,
        mirroredDuplicates: async () => Number(/^tessera_mirrored_events_duplicate_total (\d+)/m.exec((await servers[region].adminRequest('/metrics')).text)?.[1] ?? 'NaN'),
      };
    }
    const links = ['issuer-a', 'issuer-b', 'kafka-a', 'kafka-b'];
    return {
      a: regions.a,
      b: regions.b,
      setLatency: async (ms) => {
        for (const link of links) await toxiproxy.setLatency(link, ms);
      },
      partition: async () => {
        for (const link of links) await toxiproxy.setEnabled(link, false);
      },
      heal: async () => {
        for (const link of links) await toxiproxy.setEnabled(link, true);
      },
      killMirrorMaker: (region) => mirrorMakers[region].stop({ signal: 'SIGKILL' }),
      startMirrorMaker: (region) => mirrorMakers[region].start(),
      stopBroker: (region) => brokers[region].stop({ signal: 'SIGTERM' }),
      startBroker: (region) => brokers[region].start(),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
