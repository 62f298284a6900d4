import type { FastifyInstance } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import type { TesseraConfig } from '@tessera/config';
import { createHost, StartFailure, type Host, type HostOptions, type HostProcess, type Role } from '@tessera/host';
import { buildAdminApp, type AdminRouteRegistrar } from './admin-app.js';
import { buildApp, type Listener, type RouteRegistrar } from './app.js';
import { listenOrExplain } from './listen.js';
import { loadTlsMaterial, type TlsMaterial } from './tls.js';
import { transportSettings, type TransportSettings } from './transport.js';
import { InvariantBroken } from '@tessera/contracts';

/** What a role's composition hands back: its routes, for the public listeners and for the admin one. */
export interface Composition {
  readonly routes: readonly RouteRegistrar[];
  /** Routes for the admin listener, next to /metrics and the health probes (the admin API's place). */
  readonly adminRoutes?: readonly AdminRouteRegistrar[];
}

/** A role's wiring: what it opens, follows and serves, on the host it is given. */
export type Compose = (host: Host) => Promise<Composition>;

export interface RunningServer {
  /** One URL per listener: the v5 one first, then the v1 one when TESSERA_LEGACY_PORT is set. */
  readonly urls: string[];
  /** The admin listener's URL (/metrics, /healthz, /readyz); undefined with TESSERA_ADMIN_PORT=off. */
  readonly adminUrl: string | undefined;
  /** Rejects with a StartFailure when a start step refuses after the listeners opened: the caller closes and reports it. */
  readonly whenReady: Promise<void>;
  close(): Promise<void>;
}

export type StartOptions = Omit<HostOptions, 'role'>;

/** The public listeners a configuration asks for: one for both interfaces, or v5 and v1 apart. */
interface PublicListener {
  readonly variable: 'TESSERA_PORT' | 'TESSERA_LEGACY_PORT';
  readonly port: number;
  readonly serves: Listener;
}

function publicListeners(config: TesseraConfig, composition: Composition): PublicListener[] {
  const legacyPort = config.TESSERA_LEGACY_PORT;
  if (legacyPort === undefined || composition.routes.length === 0) return [{ variable: 'TESSERA_PORT', port: config.TESSERA_PORT, serves: { v5: true, v1: true } }];
  return [
    { variable: 'TESSERA_PORT', port: config.TESSERA_PORT, serves: { v5: true, v1: false } },
    { variable: 'TESSERA_LEGACY_PORT', port: legacyPort, serves: { v5: false, v1: true } },
  ];
}

export interface BuiltApps {
  /** One per public listener, in the order of `publicListeners`. */
  readonly public: readonly FastifyInstance[];
  /** Undefined with TESSERA_ADMIN_PORT=off. */
  readonly admin: FastifyInstance | undefined;
}

/**
 * Builds every listener's app for a composition, without listening: `runHost` listens on them,
 * tests `inject()` into them. Each app is closed with the host, before what the composition
 * opened (hosts close in the reverse order of registration), so requests in flight finish
 * while the store is still open.
 */
export async function buildApps(
  host: Host,
  composition: Composition,
  options: { readonly tls?: TlsMaterial; readonly transport?: TransportSettings; readonly logStream?: DestinationStream } = {},
): Promise<BuiltApps> {
  const shared = {
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.transport ? { transport: options.transport } : {}),
    logLevel: host.config.TESSERA_LOG_LEVEL,
    logStream: options.logStream,
    readiness: host.readiness,
    ports: () => host.listeners.ports(),
    metrics: host.metrics,
  };
  const apps = await Promise.all(publicListeners(host.config, composition).map(({ serves }) => buildApp({ ...shared, routes: composition.routes, listener: serves })));
  const admin = host.config.TESSERA_ADMIN_PORT === 'off' ? undefined : await buildAdminApp({ ...shared, adminRoutes: composition.adminRoutes ?? [] });
  host.onClose(async () => {
    await Promise.all([...apps, ...(admin ? [admin] : [])].map((app) => app.close()));
  });
  return { public: apps, admin };
}

/**
 * Runs one process around a role's composition: the kernel (logger, metrics, readiness, clock),
 * TLS, the listeners (all or none: a port that cannot be had fails the start), and an orderly
 * stop. Each role's main calls this with its own composition.
 */
export async function runHost(config: TesseraConfig, role: Role, compose: Compose, options: StartOptions = {}): Promise<RunningServer> {
  // One destination for every line the process writes (the kernel's, each listener's, the access
  // lines), so they stay in order, written asynchronously: under load the lines that arrive while
  // a write is under way go out together in the next one, instead of a write(2) per request on the
  // request thread. A quiet process still writes each line at once; pino flushes what is pending
  // when the process exits, a fatal exit included.
  const logStream = options.logStream ?? pino.destination({ dest: 1, sync: false });
  const hostProcess = createHost(config, { ...options, role, logStream });
  const { host } = hostProcess;
  const listening = await listenFor(hostProcess, compose, logStream).catch(async (error: unknown) => {
    await hostProcess.close();
    throw error;
  });
  // The bound ports, not the configured ones. With a port variable of 0 this line is the one place
  // that tells which port the system chose (/readyz says it too, but must be reached first), so it
  // is then written whatever TESSERA_LOG_LEVEL hides.
  const chosePorts = [config.TESSERA_PORT, config.TESSERA_LEGACY_PORT, config.TESSERA_ADMIN_PORT].includes(0);
  (chosePorts ? host.log.child({}, { level: 'info' }) : host.log).info({ urls: listening.urls, adminUrl: listening.adminUrl, ports: host.listeners.ports(), role }, 'tessera listening');
  const whenReady = hostProcess.whenReady();
  whenReady.then(
    () => host.log.info({ role }, 'ready: projections caught up'),
    (error: unknown) => {
      // A start refused after listening (a secret-hashing key that is not the log's) is the caller's to
      // report as one line, as a taken port is: it is not a fault for a supervisor's log.
      if (!(error instanceof StartFailure)) host.fatal(error, 'could not become ready');
    },
  );
  return { ...listening, whenReady, close: hostProcess.close };
}

async function listenFor(hostProcess: HostProcess, compose: Compose, logStream: DestinationStream | undefined): Promise<{ urls: string[]; adminUrl: string | undefined }> {
  const { host } = hostProcess;
  const { config } = host;
  const composition = await compose(host);
  const tls = await loadTlsMaterial(config, host.clock);
  const developmentDefaults = [...(tls.selfSigned ? ['a self-signed TLS certificate'] : []), ...hostProcess.developmentDefaults()];
  if (developmentDefaults.length > 0) host.log.warn({ dataDir: config.TESSERA_DATA_DIR }, `development-only defaults in use: ${developmentDefaults.join(', ')}`);
  const apps = await buildApps(host, composition, { tls, transport: transportSettings(config), ...(logStream ? { logStream } : {}) });
  // Not ready until every listener is up: a process that has half its ports must never look healthy.
  let listening = false;
  host.readiness.add('listeners', () => (listening ? undefined : 'not every listener is open yet'));
  const urls: string[] = [];
  for (const [index, listener] of publicListeners(config, composition).entries()) {
    const app = apps.public[index]!;
    urls.push(localhost(await listenOrExplain(app, { host: config.TESSERA_HOST, ...listener })));
    host.listeners.bound(listener.variable === 'TESSERA_PORT' ? 'public' : 'legacy', boundPort(app));
  }
  // The admin listener opens last, so a public port that is taken is still the error reported.
  const adminPort = config.TESSERA_ADMIN_PORT;
  let adminUrl: string | undefined;
  if (apps.admin && adminPort !== 'off') {
    adminUrl = localhost(await listenOrExplain(apps.admin, { host: config.TESSERA_ADMIN_HOST, port: adminPort, variable: 'TESSERA_ADMIN_PORT', hostVariable: 'TESSERA_ADMIN_HOST' }));
    host.listeners.bound('admin', boundPort(apps.admin));
  }
  listening = true;
  return { urls, adminUrl };
}

/** The port a listening app holds: the one configured, or the one the system chose for a port of 0. */
function boundPort(app: FastifyInstance): number {
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new InvariantBroken('a listener is bound to no TCP port');
  return address.port;
}

const localhost = (address: string) => address.replace('://127.0.0.1', '://localhost').replace('://[::1]', '://localhost');
