import { createServer, type Server } from 'node:http';
import type { CpuPerOperation } from './cpu-time.js';
import type { LoadResult } from './load.js';
import type { Row } from './report.js';

/**
 * What tracing costs the server: issuance and protected requests with tracing off, and on with
 * every trace sampled and with one in a hundred, each exporting over OTLP/HTTP protobuf to a local
 * receiver. The receiver takes each batch and answers 200 with an empty ExportTraceServiceResponse
 * (what a collector answers when it accepts all); it counts what it received, so a run that
 * exported nothing is seen.
 */
export interface OtlpSink {
  readonly endpoint: string;
  /** Export requests and bytes received since the last call. */
  take(): { readonly requests: number; readonly bytes: number };
  stop(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let requests = 0;
  let bytes = 0;
  const server: Server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the OTLP sink has no port');
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    take: () => {
      const taken = { requests, bytes };
      requests = 0;
      bytes = 0;
      return taken;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type TracingSetting = 'off' | 'on, sampled 1.0' | 'on, sampled 0.01';

/** The environment of each setting: OpenTelemetry's own variables, as an operator sets them. */
export function tracingEnvironment(setting: TracingSetting, endpoint: string): Record<string, string> {
  if (setting === 'off') return {};
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: setting === 'on, sampled 1.0' ? '1.0' : '0.01',
  };
}

export interface TracingRun {
  readonly setting: TracingSetting;
  readonly issue: LoadResult;
  readonly charge: LoadResult;
  readonly issueCpu: CpuPerOperation;
  readonly chargeCpu: CpuPerOperation;
  /** What the receiver got over the whole run. */
  readonly exported: { readonly requests: number; readonly bytes: number };
}

export function describeTracing(runs: readonly TracingRun[]): string {
  return runs
    .map(
      (run) =>
        `tracing ${run.setting}: get-oauth-token ${run.issue.reqPerSec.toFixed(0)} req/s, ${run.issueCpu.microsPerOperation.toFixed(0)} µs CPU; ` +
        `charge ${run.charge.reqPerSec.toFixed(0)} req/s, ${run.chargeCpu.microsPerOperation.toFixed(0)} µs CPU; ` +
        `exported ${run.exported.requests} OTLP requests, ${(run.exported.bytes / 1e6).toFixed(1)} MB`,
    )
    .join('\n');
}

/** Each setting on against off: throughput (on / off, higher is better) and server CPU per request (on / off, lower is better). */
export function tracingRows(runs: readonly TracingRun[]): Row[] {
  const off = runs.find((run) => run.setting === 'off');
  if (!off) return [];
  return runs
    .filter((run) => run.setting !== 'off')
    .flatMap((run): Row[] => [
      { what: `tracing ${run.setting}: get-oauth-token req/s (peer: tracing off)`, tessera: run.issue.reqPerSec, peer: off.issue.reqPerSec, ratio: run.issue.reqPerSec / off.issue.reqPerSec, target: '', met: '—' },
      { what: `tracing ${run.setting}: get-oauth-token µs CPU (peer: off)`, tessera: run.issueCpu.microsPerOperation, peer: off.issueCpu.microsPerOperation, ratio: run.issueCpu.microsPerOperation / off.issueCpu.microsPerOperation, target: '', met: '—' },
      { what: `tracing ${run.setting}: protected request req/s (peer: off)`, tessera: run.charge.reqPerSec, peer: off.charge.reqPerSec, ratio: run.charge.reqPerSec / off.charge.reqPerSec, target: '', met: '—' },
      { what: `tracing ${run.setting}: protected request µs CPU (peer: off)`, tessera: run.chargeCpu.microsPerOperation, peer: off.chargeCpu.microsPerOperation, ratio: run.chargeCpu.microsPerOperation / off.chargeCpu.microsPerOperation, target: '', met: '—' },
    ]);
}
