import type { Tracing, TracingOptions } from './sdk.js';
import { tracingRequested, type OtelEnvironment } from './tracing-settings.js';

export { exportDestination, serviceNameGiven, tracingRequested, type OtelEnvironment } from './tracing-settings.js';
export { errorType, inSpan, inSpanSync, markFailed, traceContextHeaders, traceparentOf, tracerOf, type SpanOptions } from './spans.js';
export type { TracingLog } from './diagnostics.js';
export type { Tracing, TracingOptions } from './sdk.js';

/**
 * Starts tracing when OTEL_* ask for it (tracingRequested), loading the SDK only then; undefined
 * otherwise. Call it before the process makes its fastify instances.
 */
export async function startTracing(env: OtelEnvironment, options: TracingOptions): Promise<Tracing | undefined> {
  if (!tracingRequested(env)) return undefined;
  const { startSdk } = await import('./sdk.js');
  return startSdk(env, options);
}
