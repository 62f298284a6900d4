import type { Span } from '@opentelemetry/api';

/** Probes and scrapes: a span each would bury the requests worth reading. */
const untracedPaths = new Set(['/healthz', '/readyz', '/metrics']);

export function isUntraced(url: string): boolean {
  return untracedPaths.has(pathOf(url));
}

const pathOf = (url: string) => url.split('?')[0]!.replace(/\/+$/, '') || '/';

/**
 * The request span as HTTP's semantic conventions name it (`POST /v5/Authorization/…`), its
 * `url.path` without the query string (where a careless client may put a token), and statuses
 * without messages: @fastify/otel writes an error's message there, and a body that fails to parse
 * is quoted in its error's message.
 */
export function shapeRequestSpan(span: Span, request: { readonly method: string; readonly url: string; readonly routeOptions: { readonly url?: string | undefined } }): void {
  const route = request.routeOptions.url;
  if (route !== undefined) span.updateName(`${request.method} ${route}`);
  span.setAttribute('url.path', request.url.split('?')[0]!);
  withoutStatusMessages(span);
}

/** Replaces the span's setStatus with one that keeps the code and drops the message (see shapeRequestSpan). */
export function withoutStatusMessages(span: Span): void {
  const setStatus = span.setStatus.bind(span);
  span.setStatus = (status) => setStatus({ code: status.code });
}
