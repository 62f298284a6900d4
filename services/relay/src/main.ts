import type { TesseraConfig } from '@tessera/config';
import { openGuardedStore, runHost, type RunningServer, type StartOptions } from '@tessera/server';
import { wireRelay } from './relay-composition.js';

/** `tessera relay`: log → Kafka alone, with /healthz and /readyz on TESSERA_PORT and /metrics on the admin listener. */
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
