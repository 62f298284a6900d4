/**
 * Whether a process traces, from OpenTelemetry's own environment variables with the meanings the
 * OpenTelemetry specification gives them. Nothing here loads the SDK: a process that does not
 * trace pays for reading four variables.
 */
export type OtelEnvironment = Readonly<Record<string, string | undefined>>;

const given = (value: string | undefined): boolean => value !== undefined && value.trim() !== '';

/** The specification's boolean: "true" in any case is true, anything else false. */
const isTrue = (value: string | undefined): boolean => value?.trim().toLowerCase() === 'true';

/**
 * On when an OTLP endpoint is named (OTEL_EXPORTER_OTLP_ENDPOINT, or the traces-only
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); off without one, with OTEL_SDK_DISABLED=true, or with
 * OTEL_TRACES_EXPORTER=none.
 */
export function tracingRequested(env: OtelEnvironment): boolean {
  if (isTrue(env.OTEL_SDK_DISABLED)) return false;
  if (env.OTEL_TRACES_EXPORTER?.split(',')[0]?.trim().toLowerCase() === 'none') return false;
  return given(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) || given(env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/**
 * Whether the environment names the service itself (OTEL_SERVICE_NAME, or `service.name` in
 * OTEL_RESOURCE_ATTRIBUTES): only otherwise does a process call itself `tessera-<role>`.
 */
export function serviceNameGiven(env: OtelEnvironment): boolean {
  if (given(env.OTEL_SERVICE_NAME)) return true;
  return (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',').some((pair) => pair.split('=')[0]?.trim() === 'service.name');
}

/**
 * Where spans go and how, for the one line logged at start: the traces endpoint as the exporter
 * will use it, without user information or query (an endpoint may carry a credential there), and
 * the protocol. OTEL_EXPORTER_OTLP_HEADERS, which may hold an API key, is never read here.
 */
export function exportDestination(env: OtelEnvironment): { readonly endpoint: string; readonly protocol: string } {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim() || 'http/protobuf';
  const named = given(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT! : env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '';
  return { endpoint: withoutCredentials(named.trim()), protocol };
}

function withoutCredentials(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return '(not a URL)';
  }
}
