import type { TesseraConfig } from '@tessera/config';
import { composeIssuer } from '@tessera/issuer';
import { runHost, type RunningServer, type StartOptions } from '@tessera/server';

/** `tessera issuer`: the token operations, the JWKS and the admin API, on the store TESSERA_EVENT_STORE names. */
export function runIssuer(config: TesseraConfig, options: StartOptions = {}): Promise<RunningServer> {
  return runHost(config, 'issuer', composeIssuer, options);
}
