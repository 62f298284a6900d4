import type { DiagLogger } from '@opentelemetry/api';
import { systemClock, type Clock } from '@tessera/timing';
import { errorCode } from '@tessera/contracts';

/** pino's calling convention, so the process's logger plugs in as it is. */
export interface TracingLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/**
 * The SDK's own warnings and errors (a collector that cannot be reached, spans dropped from a
 * full queue) as `warn` lines of the process's log, each distinct message at most once a minute:
 * with the collector down, the exporter fails on every batch, and the log must stay readable.
 */
export function rateLimitedDiagnostics(log: TracingLog, clock: Clock = systemClock, intervalMs = 60_000): DiagLogger {
  const lastLogged = new Map<string, number>();
  const report = (message: string, ...args: unknown[]) => {
    const now = clock.now();
    if (now - (lastLogged.get(message) ?? -Infinity) < intervalMs) return;
    if (lastLogged.size > 100) lastLogged.clear();
    lastLogged.set(message, now);
    log.warn({ otel: args.map(describe) }, `opentelemetry: ${message}`);
  };
  const ignore = () => undefined;
  return { error: report, warn: report, info: ignore, debug: ignore, verbose: ignore };
}

/** What the SDK passes along with a message, reduced to names and codes (an error's message may quote a URL with credentials). */
function describe(detail: unknown): unknown {
  if (detail instanceof Error) {
    const code = errorCode(detail);
    return { name: detail.name, ...(code === undefined ? {} : { code }) };
  }
  return typeof detail === 'object' ? undefined : detail;
}
