import { ROOT_CONTEXT, SpanStatusCode, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ManualClock } from '@tessera/timing';
import { afterEach, describe, expect, it } from 'vitest';
import { rateLimitedDiagnostics } from './diagnostics.js';
import { isUntraced, shapeRequestSpan, withoutStatusMessages } from './http-spans.js';
import { inSpan, inSpanSync, traceContextHeaders, traceparentOf, tracerOf } from './spans.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer = provider.getTracer('test');
afterEach(() => exporter.reset());

class Refusal extends Error {
  readonly code = 'ERR_INVALID_CLIENT';
}

describe('spans around Tessera steps', () => {
  it('end with the work, and a failure is recorded by its code alone: no message, no exception event', async () => {
    await expect(
      inSpan(tracer, 'step', { attributes: { 'tessera.stream': 's' } }, async () => {
        throw new Refusal('invalid API Login ID tsl_x or Transaction Key tsk_secret');
      }),
    ).rejects.toThrow(Refusal);
    expect(inSpanSync(tracer, 'sync step', {}, () => 42)).toBe(42);
    const [failed, done] = exporter.getFinishedSpans();
    expect(failed!.name).toBe('step');
    expect(failed!.attributes).toEqual({ 'tessera.stream': 's', 'error.type': 'ERR_INVALID_CLIENT' });
    expect(failed!.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(failed!.events).toEqual([]);
    expect(done!.name).toBe('sync step');
    expect(done!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('give their traceparent while recorded, and none without an SDK', () => {
    const span = tracer.startSpan('appending');
    const { traceId, spanId } = span.spanContext();
    expect(traceparentOf(span)).toBe(`00-${traceId}-${spanId}-01`);
    span.end();
    const unrecorded = tracerOf('no sdk registered').startSpan('nothing');
    expect(traceparentOf(unrecorded)).toBeUndefined();
  });
});

describe('the trace context sent to another service (a forwarded refresh or revoke)', () => {
  it("is the span's traceparent under the W3C propagator the SDK registers, and nothing without one", () => {
    const span = tracer.startSpan('forwarding');
    const active = trace.setSpan(ROOT_CONTEXT, span);
    expect(traceContextHeaders(active)).toEqual({});
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    try {
      const { traceId, spanId } = span.spanContext();
      expect(traceContextHeaders(active)).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
    } finally {
      propagation.disable();
      span.end();
    }
  });
});

describe('the request span @fastify/otel makes', () => {
  it('is named by method and route, keeps the path without its query, and statuses without messages', () => {
    const span = tracer.startSpan('request', { attributes: { 'url.path': '/v5/x?access_token=eyJsecret' } });
    shapeRequestSpan(span, { method: 'POST', url: '/v5/x?access_token=eyJsecret', routeOptions: { url: '/v5/x' } });
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'Unexpected token \'t\', "tsk_secret" is not valid JSON' });
    span.end();
    const [shaped] = exporter.getFinishedSpans();
    expect(shaped!.name).toBe('POST /v5/x');
    expect(shaped!.attributes['url.path']).toBe('/v5/x');
    expect(shaped!.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(JSON.stringify(shaped!.attributes)).not.toContain('secret');
  });

  it('hook and handler spans lose status messages too', () => {
    const span = tracer.startSpan('handler');
    withoutStatusMessages(span);
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'tsk_secret' });
    span.end();
    expect(exporter.getFinishedSpans()[0]!.status).toEqual({ code: SpanStatusCode.ERROR });
  });

  it('is not made for probes and scrapes', () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/metrics?x=1', '/readyz/']) expect(isUntraced(path), path).toBe(true);
    for (const path of ['/v5/Authorization/revoke-oauth-token', '/admin/v1/audit/events', '/']) expect(isUntraced(path), path).toBe(false);
  });
});

describe("the SDK's own warnings", () => {
  it('reach the log once a minute per message, with errors reduced to their name and code', () => {
    const lines: { details: object; message: string }[] = [];
    const clock = new ManualClock(0);
    const diagnostics = rateLimitedDiagnostics({ info: () => undefined, warn: (details, message) => lines.push({ details, message }) }, clock);
    const refused = Object.assign(new Error('connect ECONNREFUSED https://user:secret@collector'), { code: 'ECONNREFUSED' });
    diagnostics.error('export failed', refused);
    diagnostics.error('export failed', refused);
    diagnostics.warn('queue full, dropping spans');
    clock.advance(60_000);
    diagnostics.error('export failed', refused);
    diagnostics.info('ignored');
    expect(lines.map((line) => line.message)).toEqual(['opentelemetry: export failed', 'opentelemetry: queue full, dropping spans', 'opentelemetry: export failed']);
    expect(lines[0]!.details).toEqual({ otel: [{ name: 'Error', code: 'ECONNREFUSED' }] });
    expect(JSON.stringify(lines)).not.toContain('secret');
  });
});
