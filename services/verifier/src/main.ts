import type { TesseraConfig } from '@tessera/config';
import { runHost, type RunningServer, type StartOptions } from '@tessera/server';
import { composeVerifier } from './verifier-composition.js';

/** `tessera verifier`: bearer-token decisions alone, fed from the log or from Kafka (TESSERA_VERIFIER_SOURCE). */
export function runVerifier(config: TesseraConfig, options: StartOptions = {}): Promise<RunningServer> {
  return runHost(config, 'verifier', composeVerifier, options);
}
