import type { TesseraConfig } from '@tessera/config';
import { CliError } from '../cli-error.js';
import { runServe } from './serve.js';

/** The relay alone: log → Kafka, with /healthz, /readyz and /metrics on TESSERA_PORT. */
export async function runRelay(config: TesseraConfig): Promise<number> {
  if (!config.TESSERA_KAFKA_BROKERS) throw new CliError('the relay needs TESSERA_KAFKA_BROKERS (host:port,…)');
  return runServe(config, 'relay');
}
