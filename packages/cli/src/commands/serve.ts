import type { TesseraConfig } from '@tessera/config';
import type { RunningServer, StartOptions } from '@tessera/server';

type Role = 'all-in-one' | 'issuer' | 'verifier' | 'relay';

/**
 * Each service owns its entry point; the CLI only picks one. Imported on demand, so the admin
 * commands never load the HTTP server, Kafka's client or a store driver they do not use.
 */
const entryPoints: Record<Role, () => Promise<(config: TesseraConfig, options?: StartOptions) => Promise<RunningServer>>> = {
  'all-in-one': async () => (await import('@tessera/all-in-one')).runAllInOne,
  issuer: async () => (await import('@tessera/issuer/main')).runIssuer,
  verifier: async () => (await import('@tessera/verifier/main')).runVerifier,
  relay: async () => (await import('@tessera/relay/main')).runRelay,
};

/** Runs until SIGTERM or SIGINT, then drains in-flight requests and exits 0. Returns -1: still running. */
export async function runServe(config: TesseraConfig, role: Role): Promise<number> {
  const run = await entryPoints[role]();
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
