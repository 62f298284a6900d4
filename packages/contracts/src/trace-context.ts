/**
 * The W3C Trace Context `traceparent` an event carries in its metadata: version 00, a 32-digit
 * trace id, a 16-digit parent span id and the trace flags, in lower-case hex. Written by a traced
 * append, read by the relay to continue the trace on Kafka. No tracing library here: the log's
 * format is ours, whatever propagators a process is configured with.
 */
export const traceparentPattern = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

export interface TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  /** Bit 0 is "sampled". */
  readonly traceFlags: number;
}

export function formatTraceparent({ traceId, spanId, traceFlags }: TraceParent): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** Undefined for anything that is not a valid version-00 traceparent. */
export function parseTraceparent(value: string | undefined): TraceParent | undefined {
  if (value === undefined || !traceparentPattern.test(value)) return undefined;
  const [, traceId, spanId, flags] = value.split('-');
  return { traceId: traceId!, spanId: spanId!, traceFlags: Number.parseInt(flags!, 16) };
}
