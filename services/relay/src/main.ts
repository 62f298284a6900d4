import type { TesseraConfig } from '@tessera/config';
import { composeRelay } from '@tessera/relay';
import { runHost, type RunningServer, type StartOptions } from '@tessera/server';

/** `tessera relay`: log → Kafka alone, with /healthz, /readyz and /metrics on the admin listener. */
export function runRelay(config: TesseraConfig, options: StartOptions = {}): Promise<RunningServer> {
  return runHost(config, 'relay', composeRelay, options);
}
