import type { TesseraConfig } from '@tessera/config';
import type { Role } from '@tessera/host';
import type { RunningServer, StartOptions } from '@tessera/server';

/**
 * Each role owns its main; the CLI only picks one. Imported on demand, so an admin command never
 * loads the HTTP server, Kafka's client or a store driver it does not use.
 */
const mains: Record<Role, () => Promise<(config: TesseraConfig, options?: StartOptions) => Promise<RunningServer>>> = {
  'all-in-one': async () => (await import('@tessera/app-all-in-one')).runAllInOne,
  issuer: async () => (await import('@tessera/app-issuer')).runIssuer,
  verifier: async () => (await import('@tessera/app-verifier')).runVerifier,
  relay: async () => (await import('@tessera/app-relay')).runRelay,
};

/** Runs until SIGTERM or SIGINT, then drains in-flight requests and exits 0. Returns -1: still running. */
export async function runServe(config: TesseraConfig, role: Role): Promise<number> {
  const run = await mains[role]();
  const server = await run(config);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return -1;
}
