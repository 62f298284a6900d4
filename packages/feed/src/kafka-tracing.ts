import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, trace, type Attributes, type Context, type Span, type TextMapGetter } from '@opentelemetry/api';
import { errorCode, parseTraceparent, type RecordedEvent } from '@tessera/contracts';
import type { Delivery, FeedEvent } from './revocation-feed.js';

/**
 * The feed's spans, with OpenTelemetry's messaging conventions: one `send <topic>` span per event
 * published, a child of the span that appended the event (its traceparent is in the event's
 * metadata in the log), whose context travels in the message's headers; and one `process <topic>`
 * span per event handed to a consumer, a child of that send span and linked to it. MirrorMaker 2
 * copies headers, so a region that follows a mirrored topic continues the same trace.
 *
 * Only @opentelemetry/api: an application that runs no SDK gets spans that record nothing, and
 * no headers (its propagator is a no-op). Attributes name the topic, the event and its place in
 * the log, never what an event carries.
 */
const tracer = trace.getTracer('@tessera/feed');

function eventAttributes(event: Pick<FeedEvent, 'eventId' | 'stream' | 'position'> & { readonly type: string }): Attributes {
  return { 'messaging.message.id': event.eventId, 'tessera.event.type': event.type, 'tessera.stream': event.stream, 'tessera.position': Number(event.position) };
}

/** The context an event was appended in, from the traceparent its metadata keeps; a new trace without one. */
function appendContext(recorded: RecordedEvent): Context {
  const parent = parseTraceparent(recorded.metadata.traceparent);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true }) : ROOT_CONTEXT;
}

export interface SendSpans {
  /** The headers to add to each message, in the order of the events: the trace context of its send span. */
  readonly headers: readonly Readonly<Record<string, string>>[];
  /** Ends every span, failed with the error's code or name when the send failed. */
  end(error?: unknown): void;
}

export function startSendSpans(topic: string, events: readonly RecordedEvent[]): SendSpans {
  const spans: Span[] = [];
  const headers = events.map((recorded) => {
    const span = tracer.startSpan(
      `send ${topic}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: { ...messaging(topic, 'send'), ...eventAttributes({ ...recorded, type: recorded.event.type }) },
      },
      appendContext(recorded),
    );
    spans.push(span);
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
    return carrier;
  });
  return {
    headers,
    end: (error) => {
      for (const span of spans) {
        if (error !== undefined) fail(span, error);
        span.end();
      }
    },
  };
}

/** Runs a consumer's handling of one event in its `process` span. */
export function inProcessSpan(
  topic: string,
  groupId: string,
  headers: Readonly<Record<string, Buffer | string | (Buffer | string)[] | undefined>> | undefined,
  event: FeedEvent,
  delivery: Delivery,
  handle: () => void | Promise<void>,
): Promise<void> {
  const sent = propagation.extract(ROOT_CONTEXT, headers ?? {}, kafkaHeaders);
  const sender = trace.getSpanContext(sent);
  return tracer.startActiveSpan(
    `process ${topic}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        ...messaging(topic, 'process'),
        'messaging.consumer.group.name': groupId,
        'messaging.destination.partition.id': String(delivery.partition),
        'messaging.kafka.offset': Number(delivery.offset),
        ...eventAttributes({ ...event, type: event.event.type }),
      },
      links: sender && trace.isSpanContextValid(sender) ? [{ context: sender }] : [],
    },
    sent,
    async (span) => {
      try {
        await handle();
      } catch (error) {
        fail(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

function messaging(topic: string, operation: 'send' | 'process'): Attributes {
  return { 'messaging.system': 'kafka', 'messaging.operation.type': operation, 'messaging.operation.name': operation, 'messaging.destination.name': topic };
}

/** The error's code or class name; never its message, which may quote a broker's answer or an event. */
function fail(span: Span, error: unknown): void {
  const code = errorCode(error) ?? (error instanceof Error ? error.name : 'unknown');
  span.setAttribute('error.type', code);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** kafkajs hands headers as Buffers. */
const kafkaHeaders: TextMapGetter<Readonly<Record<string, Buffer | string | (Buffer | string)[] | undefined>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    if (value === undefined) return undefined;
    return Array.isArray(value) ? value.map(String) : String(value);
  },
};
