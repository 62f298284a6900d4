import { FastifyOtelInstrumentation } from '@fastify/otel';
import { DiagLogLevel, diag } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { rateLimitedDiagnostics, type TracingLog } from './diagnostics.js';
import { isUntraced, shapeRequestSpan, withoutStatusMessages } from './http-spans.js';
import { exportDestination, serviceNameGiven, type OtelEnvironment } from './tracing-settings.js';

/** The one module that loads the OpenTelemetry SDK: imported only when tracing is on. */
export interface Tracing {
  /** Exports what is still queued, waiting at most `timeoutMs`; then stops. */
  shutdown(timeoutMs?: number): Promise<void>;
}

export interface TracingOptions {
  /** service.name when the environment names none. */
  readonly defaultServiceName: string;
  readonly log: TracingLog;
}

/**
 * Starts the SDK as OTEL_* configure it (exporter and protocol, endpoint, headers, sampler,
 * batch processor, propagators, resource), with @fastify/otel on every fastify instance made from
 * now on. Traces only: Tessera's metrics are on /metrics and its logs on stdout, so the metric
 * and log exporters the SDK would otherwise start are not.
 */
export function startSdk(env: OtelEnvironment, options: TracingOptions): Tracing {
  // OTEL_LOG_LEVEL asks for the SDK's own console diagnostics; without it, warnings reach the log.
  if (env.OTEL_LOG_LEVEL === undefined) diag.setLogger(rateLimitedDiagnostics(options.log), DiagLogLevel.WARN);
  const fastify = new FastifyOtelInstrumentation({
    registerOnInitialization: true,
    // A span per route and its handler; one per hook would double the cost of a request.
    instrumentHooks: false,
    recordExceptions: false,
    ignorePaths: ({ url }) => isUntraced(url),
    requestHook: shapeRequestSpan,
    lifecycleHook: withoutStatusMessages,
  });
  const sdk = new NodeSDK({
    ...(serviceNameGiven(env) ? {} : { serviceName: options.defaultServiceName }),
    instrumentations: [fastify],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  options.log.info(exportDestination(env), 'tracing on: exporting spans over OTLP');
  return {
    shutdown: async (timeoutMs = 5_000) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      // A collector that is down must not hold the process past its stop.
      await Promise.race([sdk.shutdown().catch(() => undefined), late]);
      clearTimeout(timer);
    },
  };
}
