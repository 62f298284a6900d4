import type { TesseraConfig } from '@tessera/config';
import { openGuardedStore, runHost, type RunningServer, type StartOptions } from '@tessera/server';
import { wireRelay } from './relay-composition.js';

/** `tessera relay`: log → Kafka alone, with /healthz, /readyz and /metrics on TESSERA_PORT. */
export function runRelay(config: TesseraConfig, options: StartOptions = {}): Promise<RunningServer> {
  return runHost(
    config,
    'relay',
    async (host) => {
      const store = await openGuardedStore(host);
      await wireRelay(host, store);
      return { routes: [] };
    },
    options,
  );
}
