import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { TesseraConfig } from '@tessera/config';
import { buildAdminApp, type AdminRouteRegistrar } from './admin-app.js';
import { buildApp } from './app.js';
import { ownerOnlyDataFolder } from './data-folder.js';
import { listenOrExplain } from './listen.js';
import { loggerOptions } from './logger.js';
import { createMetrics, registerGauges, type Metrics } from './metrics.js';
import { createReadiness, type Readiness } from './readiness.js';
import { loadTlsMaterial } from './tls.js';
import { transportSettings } from './transport.js';

export interface RunningServer {
  /** One URL per listener: the v5 one first, then the v1 one when TESSERA_LEGACY_PORT is set. */
  readonly urls: string[];
  /** The admin listener's URL (/metrics, /healthz, /readyz); undefined with TESSERA_ADMIN_PORT=off. */
  readonly adminUrl: string | undefined;
  readonly whenReady: Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Where JSON log lines go (default stdout). Tests capture it to prove no secret is logged. */
  readonly logStream?: NodeJS.WritableStream;
}

export type Role = 'all-in-one' | 'issuer' | 'verifier' | 'relay';

/** Which interfaces one listener serves: both on the one port, or v5 and v1 apart (TESSERA_LEGACY_PORT). */
export interface Listener {
  readonly v5: boolean;
  readonly v1: boolean;
}

/** A service's routes, registered on each listener's app. */
export type RouteRegistrar = (app: FastifyInstance, listener: Listener) => Promise<void>;

/** What a service's composition gets to wire itself into the process. */
export interface Host {
  readonly config: TesseraConfig;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly readiness: Readiness;
  /** Released when the process stops, in the reverse order of registration (what opened first closes last). */
  onClose(close: () => Promise<void>): void;
  /** A start-up step the process is not ready without. */
  untilReady(step: Promise<unknown>): void;
  /** A failure no retry fixes (a bug): logged, then the process stops for its supervisor to see. */
  fatal(error: unknown, message: string): void;
  /** Names a development-only default this process uses, for the one warning at start. */
  warnDevelopmentDefault(what: string): void;
}

export interface Composition {
  readonly routes: readonly RouteRegistrar[];
  /** Routes for the admin listener, next to /metrics and the health probes (the admin API's place). */
  readonly adminRoutes?: readonly AdminRouteRegistrar[];
}

/**
 * Runs one process around a service's composition: logger, metrics, readiness, TLS, the
 * listeners (all or none: a port that cannot be had fails the start), and an orderly stop.
 * Each service (issuer, verifier, relay, the all-in-one) owns its composition; this is the
 * part they share.
 */
export async function runHost(
  config: TesseraConfig,
  role: Role,
  compose: (host: Host) => Promise<Composition>,
  options: StartOptions = {},
): Promise<RunningServer> {
  const log = pino({ ...(loggerOptions(config.TESSERA_LOG_LEVEL) as object), name: `tessera-${role}` }, options.logStream ?? process.stdout);
  const metrics = createMetrics();
  const readiness = createReadiness();
  const closers: (() => Promise<void>)[] = [];
  const pending: Promise<unknown>[] = [];
  const developmentDefaults: string[] = [];
  let apps: FastifyInstance[] = [];
  let closing: Promise<void> | undefined;

  async function closeAll(): Promise<void> {
    closing ??= (async () => {
      // Stop accepting, let in-flight requests finish (their appends are awaited), then release the sources.
      await Promise.all(apps.map((app) => app.close()));
      for (const close of [...closers].reverse()) await settle(close);
    })();
    return closing;
  }

  const host: Host = {
    config,
    log,
    metrics,
    readiness,
    onClose: (close) => void closers.push(close),
    untilReady: (step) => {
      // Observed at once, so a step that fails before the listeners are up is not an unhandled rejection;
      // whenReady still sees the failure.
      step.catch(() => undefined);
      pending.push(step);
    },
    fatal: (error, message) => {
      log.fatal({ err: error }, `${message}; exiting so a supervisor restarts this process`);
      void closeAll().finally(() => process.exit(1));
    },
    warnDevelopmentDefault: (what) => void developmentDefaults.push(what),
  };

  ownerOnlyDataFolder(config.TESSERA_DATA_DIR);
  let composition: Composition;
  try {
    composition = await compose(host);
  } catch (error) {
    await closeAll();
    throw error;
  }

  registerGauges(metrics, {
    tessera_ready: { help: '1 while /readyz answers 200: store available, projections caught up, signing key and listeners in place', read: () => (readiness.isReady() ? 1 : 0) },
  });

  const tls = await loadTlsMaterial(config);
  if (tls.selfSigned) developmentDefaults.unshift('a self-signed TLS certificate');
  if (developmentDefaults.length > 0) {
    log.warn({ dataDir: config.TESSERA_DATA_DIR }, `development-only defaults in use: ${developmentDefaults.join(', ')}`);
  }

  const legacyApart = config.TESSERA_LEGACY_PORT !== undefined && composition.routes.length > 0;
  const listeners = legacyApart
    ? [
        { variable: 'TESSERA_PORT', port: config.TESSERA_PORT, serves: { v5: true, v1: false } },
        { variable: 'TESSERA_LEGACY_PORT', port: config.TESSERA_LEGACY_PORT!, serves: { v5: false, v1: true } },
      ]
    : [{ variable: 'TESSERA_PORT', port: config.TESSERA_PORT, serves: { v5: true, v1: true } }];
  const transport = transportSettings(config);
  const shared = { tls, logLevel: config.TESSERA_LOG_LEVEL, logStream: options.logStream, readiness, metrics, transport };
  apps = await Promise.all(listeners.map(({ serves }) => buildApp({ ...shared, routes: composition.routes, listener: serves })));
  // The admin listener opens last, so a public port that is taken is still the error reported.
  const adminPort = config.TESSERA_ADMIN_PORT;
  const admin = adminPort === 'off' ? undefined : await buildAdminApp({ ...shared, adminRoutes: composition.adminRoutes ?? [] });
  if (admin) apps.push(admin);
  // Not ready until every listener is up: a process that has half its ports must never look healthy.
  let listening = false;
  readiness.add('listeners', () => (listening ? undefined : 'not every listener is open yet'));
  const urls: string[] = [];
  let adminUrl: string | undefined;
  try {
    for (const [index, listener] of listeners.entries()) {
      urls.push(localhost(await listenOrExplain(apps[index]!, { host: config.TESSERA_HOST, ...listener })));
    }
    if (admin && adminPort !== 'off') {
      adminUrl = localhost(
        await listenOrExplain(admin, { host: config.TESSERA_ADMIN_HOST, port: adminPort, variable: 'TESSERA_ADMIN_PORT', hostVariable: 'TESSERA_ADMIN_HOST' }),
      );
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  listening = true;
  log.info({ urls, adminUrl, role }, 'tessera listening');

  const whenReady = Promise.all(pending).then(() => undefined);
  whenReady.then(
    () => log.info({ role }, 'ready: projections caught up'),
    (error: unknown) => host.fatal(error, 'could not become ready'),
  );
  return { urls, adminUrl, whenReady, close: closeAll };
}

const localhost = (address: string) => address.replace('://127.0.0.1', '://localhost').replace('://[::1]', '://localhost');

async function settle(step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch {
    // A source that fails to close must not stop the others from closing.
  }
}
