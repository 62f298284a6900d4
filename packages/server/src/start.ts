import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { TesseraConfig } from '@tessera/config';
import type { EventStore } from '@tessera/event-store';
import { buildApp } from './app.js';
import { openEventStore } from './event-store-factory.js';
import { loggerOptions } from './logger.js';
import { createMetrics, instrumentEventStore, registerGauges } from './metrics.js';
import { createIssuerParts, createVerifierParts, nowSeconds, startFollowing, type IssuerParts, type VerifierParts } from './runtime.js';
import { loadTlsMaterial } from './tls.js';

export interface RunningServer {
  /** One URL per listener: the v5 one first, then the v1 one when TESSERA_LEGACY_PORT is set. */
  readonly urls: string[];
  readonly whenReady: Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Where JSON log lines go (default stdout). Tests capture it to prove no secret is logged. */
  readonly logStream?: NodeJS.WritableStream;
}

export type Role = 'all-in-one' | 'issuer' | 'verifier';

/**
 * Starts one process: the all-in-one (issuer + verifier), or either alone. Every role
 * follows the event log into memory and reports ready once caught up.
 */
export async function startServer(config: TesseraConfig, role: Role, options: StartOptions = {}): Promise<RunningServer> {
  const log = pino({ ...(loggerOptions(config.TESSERA_LOG_LEVEL) as object), name: `tessera-${role}` }, options.logStream ?? process.stdout);
  const metrics = createMetrics();
  const store = instrumentEventStore(await openEventStore(config), metrics);
  const verifier: VerifierParts | undefined = role === 'issuer' ? undefined : createVerifierParts(config);
  const issuer: IssuerParts | undefined =
    role === 'verifier' ? undefined : createIssuerParts(config, store, { onFamilyEvent: verifier?.state.applyFamilyEvent });
  const readers = [...(issuer?.readers ?? []), ...(verifier?.state.readers ?? [])];
  const following = startFollowing(store, readers, (error) => {
    log.fatal({ err: error }, 'the event log subscription failed; exiting so a supervisor restarts this process');
    process.exitCode = 1;
    void closeAll();
  });

  let keysReady = issuer === undefined;
  const whenReady = following.whenCaughtUp.then(async () => {
    if (issuer) {
      const published = await issuer.keyring.ensureKey(store, nowSeconds());
      // This process's key sets learn a new key at once rather than on the next log poll.
      if (published) {
        issuer.keys.apply(published);
        verifier?.state.keys.apply(published);
      }
      keysReady = true;
    }
  });
  const isReady = () => following.isCaughtUp() && keysReady;
  registerGauges(metrics, {
    tessera_ready: { help: '1 once every projection has caught up with the log', read: () => (isReady() ? 1 : 0) },
    tessera_event_store_head_position: { help: 'Global position of the newest event in the log', read: async () => Number((await store.headPosition()) ?? 0n) },
    tessera_projection_last_applied_position: { help: 'Global position of the last event of a followed type this process applied (events of other types are not counted, so compare with care)', read: () => Number(following.subscription.lastPosition() ?? 0n) },
    ...(verifier ? { tessera_revocation_projection_entries: { help: 'Families the revocation projection currently holds', read: () => verifier.state.projection.size } } : {}),
  });

  const tls = await loadTlsMaterial(config);
  if (tls.selfSigned || config.TESSERA_EVENT_STORE === undefined) {
    log.warn(
      { dataDir: config.TESSERA_DATA_DIR },
      'development-only defaults in use: self-signed TLS certificate, signing keys and embedded SQLite event store in the data folder',
    );
  }
  const legacyApart = config.TESSERA_LEGACY_PORT !== undefined;
  const appFor = (v5: boolean, v1: boolean) =>
    buildApp({
      tls,
      logLevel: config.TESSERA_LOG_LEVEL,
      logStream: options.logStream,
      ready: isReady,
      metrics,
      issuer: issuer && {
        tokens: issuer.tokens,
        jwks: () => issuer.keys.jwks(nowSeconds()),
        v5,
        v1,
      },
      verifier: verifier && { state: verifier.state, bearer: verifier.bearer, v5, v1 },
    });
  const apps: FastifyInstance[] = [];
  apps.push(await appFor(true, !legacyApart));
  if (legacyApart) apps.push(await appFor(false, true));
  const urls: string[] = [];
  const ports = legacyApart ? [config.TESSERA_PORT, config.TESSERA_LEGACY_PORT!] : [config.TESSERA_PORT];
  for (const [index, app] of apps.entries()) {
    const address = await app.listen({ host: config.TESSERA_HOST, port: ports[index]! });
    urls.push(address.replace('://127.0.0.1', '://localhost').replace('://[::1]', '://localhost'));
  }
  log.info({ urls, role }, 'tessera listening');
  void whenReady.then(() => log.info({ role }, 'ready: projections caught up'));

  let closing: Promise<void> | undefined;
  async function closeAll(): Promise<void> {
    closing ??= (async () => {
      // Stop accepting, let in-flight requests finish (their appends are awaited), then release the store.
      await Promise.all(apps.map((app) => app.close()));
      verifier?.stopForgetting();
      await following.subscription.close();
      await closeStore(store);
    })();
    return closing;
  }
  return { urls, whenReady, close: closeAll };
}

async function closeStore(store: EventStore): Promise<void> {
  try {
    await store.close();
  } catch {
    // Closing twice or after a failure is not worth failing a shutdown over.
  }
}
