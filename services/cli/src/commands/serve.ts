import type { TesseraConfig } from '@tessera/config';
import type { Role } from '@tessera/host';
import type { RunningServer, StartOptions } from '@tessera/server';
import { loggerOptions } from '@tessera/host';
import { startTracing, type TracingLog } from '@tessera/tracing';
import pino from 'pino';
import { errorCode } from '@tessera/contracts';

/**
 * Each role owns its main; the CLI only picks one. Imported on demand, so an admin command never
 * loads the HTTP server, Kafka's client or a store driver it does not use.
 */
const mains: Record<Role, () => Promise<(config: TesseraConfig, options?: StartOptions) => Promise<RunningServer>>> = {
  'all-in-one': async () => (await import('@tessera/service-all-in-one')).runAllInOne,
  issuer: async () => (await import('@tessera/service-issuer')).runIssuer,
  verifier: async () => (await import('@tessera/service-verifier')).runVerifier,
  relay: async () => (await import('@tessera/service-relay')).runRelay,
};

/**
 * Runs until SIGTERM or SIGINT, then drains in-flight requests and exits 0. Returns -1: still running.
 * A start step that refuses once listening (a StartFailure: a secret-hashing key that is not the
 * log's) closes the process and rejects, so the CLI reports it in one line as it does a taken port.
 */
export async function runServe(config: TesseraConfig, role: Role): Promise<number> {
  // Before the role's fastify instances exist, so @fastify/otel sees each one made. Without an
  // OTLP endpoint in OTEL_* this loads nothing of the SDK (docs/operations.md, "Tracing").
  const tracing = await startTracing(process.env, { defaultServiceName: `tessera-${role}`, log: tracingLog(config, role) });
  const run = await mains[role]();
  const server = await run(config);
  const stop = () => {
    // Spans of the last requests are exported after they drained, within a bounded wait.
    server
      .close()
      .then(() => tracing?.shutdown())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // Any other failure to become ready is fatal already (logged, then exit 1): only a refusal is reported here.
  const refused = await server.whenReady.then(
    () => undefined,
    (error: unknown) => (errorCode(error) === 'ERR_START_FAILED' ? error : undefined),
  );
  if (refused !== undefined) {
    await server.close();
    await tracing?.shutdown();
    throw refused;
  }
  return -1;
}

/** The process's log format, for the tracing SDK's start line and its warnings (the host's logger does not exist yet). */
function tracingLog(config: TesseraConfig, role: Role): TracingLog {
  return pino({ ...loggerOptions(config.TESSERA_LOG_LEVEL), name: `tessera-${role}` });
}
