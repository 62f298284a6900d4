import type { TesseraConfig } from '@tessera/config';
import { openGuardedStore, type Host } from '@tessera/host';
import { regionSettings } from '@tessera/regions';
import { wireRelay } from '@tessera/relay';
import { runHost, type RunningServer, type StartOptions } from '@tessera/server';

/**
 * `tessera relay`'s wiring: log → Kafka alone, with /healthz, /readyz and /metrics on the admin
 * listener. It serves no routes of its own, so it needs nothing of HTTP: what it returns is a
 * composition with none.
 */
export async function composeRelay(host: Host): Promise<{ readonly routes: readonly [] }> {
  await wireRelay(host, await openGuardedStore(host), regionSettings(host.config)?.own);
  return { routes: [] };
}

/** `tessera relay`: log → Kafka alone, with /healthz, /readyz and /metrics on the admin listener. */
export function runRelay(config: TesseraConfig, options: StartOptions = {}): Promise<RunningServer> {
  return runHost(config, 'relay', composeRelay, options);
}
