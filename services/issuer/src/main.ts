import type { TesseraConfig } from '@tessera/config';
import type { Host } from '@tessera/host';
import { runHost, type Composition, type RunningServer, type StartOptions } from '@tessera/server';
import { wireIssuerProcess } from './issuer-process.js';

/**
 * `tessera issuer`'s wiring: the issuer process with no verifier. A cut made by the admin API
 * dates this issuer's next tokens at once.
 */
export async function composeIssuer(host: Host): Promise<Composition> {
  return (await wireIssuerProcess(host)).composition;
}

/** `tessera issuer`: the token operations, the JWKS and the admin API, on the store TESSERA_EVENT_STORE names. */
export function runIssuer(config: TesseraConfig, options: StartOptions = {}): Promise<RunningServer> {
  return runHost(config, 'issuer', composeIssuer, options);
}
