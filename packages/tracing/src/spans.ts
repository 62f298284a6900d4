import { SpanStatusCode, context, propagation, trace, type Attributes, type Context, type Span, type SpanKind, type Tracer } from '@opentelemetry/api';
import { errorCode, formatTraceparent } from '@tessera/contracts';

/**
 * Spans around Tessera's own steps. Without an SDK (tracing off) the API hands out spans that
 * record nothing, so these cost a function call or two.
 *
 * An error is recorded by its code or class name only, never its message and never as an
 * exception event: a message may quote what a client sent, and that may be a secret.
 */
export function tracerOf(scope: string): Tracer {
  return trace.getTracer(scope);
}

export interface SpanOptions {
  readonly attributes?: Attributes;
  readonly kind?: SpanKind;
}

export function inSpan<T>(tracer: Tracer, name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

export function inSpanSync<T>(tracer: Tracer, name: string, options: SpanOptions, work: (span: Span) => T): T {
  return tracer.startActiveSpan(name, options, (span) => {
    try {
      return work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** `error.type` is the error's stable code (ERR_…) or its class name. */
export function markFailed(span: Span, error: unknown): void {
  span.setAttribute('error.type', errorType(error));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

export function errorType(error: unknown): string {
  return errorCode(error) ?? (error instanceof Error ? error.name : 'unknown');
}

/** The W3C traceparent of a span that is being recorded, for an event's metadata; undefined when tracing is off. */
export function traceparentOf(span: Span): string | undefined {
  const context = span.spanContext();
  if (!trace.isSpanContextValid(context)) return undefined;
  return formatTraceparent(context);
}

/**
 * The trace context as headers for a request to another service (`traceparent`, `tracestate`, as
 * OTEL_PROPAGATORS say), so its spans join this trace; none without an SDK.
 */
export function traceContextHeaders(from: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(from, carrier);
  return carrier;
}
