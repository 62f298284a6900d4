/**
 * Jaeger v2, a trace backend that is not Tessera's code: it receives OTLP (gRPC and HTTP, protobuf
 * and JSON) and answers its query API with what it stored, in memory. Built by build.sh beside this
 * file; tests that read traces back start one each with `startJaeger()`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../kafka/kafka-broker.js';
import { OwnedProcess, workFolder } from '../kafka/owned-process.js';

const host = '127.0.0.1';

/** The Jaeger version go.mod pins. */
export function jaegerVersion(): string {
  const pinned = /^\s*github\.com\/jaegertracing\/jaeger (v\S+)/m.exec(readFileSync(join(import.meta.dirname, 'go.mod'), 'utf8'));
  if (!pinned) throw new Error('infra/jaeger/go.mod pins no github.com/jaegertracing/jaeger');
  return pinned[1]!;
}

/** TESSERA_JAEGER, or where build.sh leaves the binary; undefined when neither exists. */
export function jaegerBinary(): string | undefined {
  const binary = process.env.TESSERA_JAEGER || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tessera', `jaeger-${jaegerVersion()}`, 'jaeger');
  return existsSync(binary) ? binary : undefined;
}

/** One span as Jaeger stored it, read back in OTLP's shape (api/v3), attributes flattened. */
export interface StoredSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Absent on a root span. */
  readonly parentSpanId?: string;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  /** The resource's service.name and process.pid: which process exported it. */
  readonly service: string;
  readonly pid: number | undefined;
}

interface OtlpValue {
  readonly stringValue?: string;
  readonly intValue?: string;
  readonly boolValue?: boolean;
  readonly doubleValue?: number;
  readonly arrayValue?: { readonly values?: readonly OtlpValue[] };
}
interface OtlpAttribute {
  readonly key: string;
  readonly value: OtlpValue;
}
interface OtlpTraces {
  readonly resourceSpans?: readonly {
    readonly resource?: { readonly attributes?: readonly OtlpAttribute[] };
    readonly scopeSpans?: readonly {
      readonly spans?: readonly (Omit<StoredSpan, 'attributes' | 'links' | 'service' | 'pid'> & { readonly attributes?: readonly OtlpAttribute[]; readonly links?: StoredSpan['links'] })[];
    }[];
  }[];
}

function valueOf(value: OtlpValue): unknown {
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

const flatten = (attributes: readonly OtlpAttribute[] = []) => Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]));

export interface Jaeger {
  /** OTLP over HTTP (http/protobuf and http/json): OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly otlpHttp: string;
  /** OTLP over gRPC. */
  readonly otlpGrpc: string;
  /** The spans Jaeger holds of this trace; none while it has none. */
  trace(traceId: string): Promise<StoredSpan[]>;
  /** Every trace a service sent in the last hour, up to `limit`: the query API's raw answer, for grepping. */
  tracesOf(service: string, limit?: number): Promise<string>;
  stop(): Promise<void>;
}

export async function startJaeger(binary: string): Promise<Jaeger> {
  const folder = workFolder(undefined, 'tessera-jaeger-');
  const [grpc, http, query, queryGrpc] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const config = join(folder.dir, 'config.yaml');
  // Only what reading traces back needs: the OTLP receiver, memory storage and the query API.
  writeFileSync(
    config,
    `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memory
    http:
      endpoint: ${host}:${query}
    grpc:
      endpoint: ${host}:${queryGrpc}
  jaeger_storage:
    backends:
      memory:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: ${host}:${grpc}
      http:
        endpoint: ${host}:${http}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memory
`,
  );
  const queryUrl = `http://${host}:${query}`;
  const owned = new OwnedProcess(process.pid);
  await owned.launch(binary, ['--config', `file:${config}`], {
    what: 'Jaeger',
    logFile: join(folder.dir, 'jaeger.log'),
    timeoutMs: 30_000,
    check: async () => (await fetch(`${queryUrl}/api/services`).then((answer) => answer.ok).catch(() => false)) && (await listening(http)),
  });
  return {
    otlpHttp: `http://${host}:${http}`,
    otlpGrpc: `http://${host}:${grpc}`,
    trace: async (traceId) => {
      const answer = await fetch(`${queryUrl}/api/v3/traces/${traceId}`);
      if (answer.status === 404) return [];
      if (!answer.ok) throw new Error(`Jaeger answered ${answer.status} for trace ${traceId}`);
      const { result } = (await answer.json()) as { result: OtlpTraces };
      return (result.resourceSpans ?? []).flatMap(({ resource, scopeSpans }) => {
        const process = flatten(resource?.attributes);
        return (scopeSpans ?? []).flatMap(({ spans }) =>
          (spans ?? []).map((span) => ({
            traceId: span.traceId,
            spanId: span.spanId,
            ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
            name: span.name,
            kind: span.kind,
            attributes: flatten(span.attributes),
            links: (span.links ?? []).map(({ traceId: linkedTrace, spanId }) => ({ traceId: linkedTrace, spanId })),
            service: String(process['service.name']),
            pid: typeof process['process.pid'] === 'number' ? process['process.pid'] : undefined,
          })),
        );
      });
    },
    tracesOf: async (service, limit = 1000) => (await fetch(`${queryUrl}/api/traces?service=${encodeURIComponent(service)}&limit=${limit}&lookback=1h`)).text(),
    stop: async () => {
      await owned.stop();
      folder.remove();
    },
  };
}

/** The OTLP/HTTP receiver answers (405 to a GET): it opens after the query API. */
async function listening(port: number): Promise<boolean> {
  return fetch(`http://${host}:${port}/v1/traces`).then(
    () => true,
    () => false,
  );
}
