import type { EventStore } from '@tessera/event-store';
import { inSpan, traceparentOf, tracerOf } from '@tessera/tracing';
import { aroundAppend } from './around-append.js';

const tracer = tracerOf('@tessera/host');

/**
 * Wraps a store so every append is a span (`tessera.event_store.append`, with the stream, the
 * event types and the position written), and each event appended under a traced span carries
 * that span's traceparent in its metadata: the relay, in another process and later, continues
 * the trace from the log. Reads pass through untraced.
 */
export function traceEventStore(store: EventStore): EventStore {
  return aroundAppend(store, (stream, events, options) =>
    inSpan(tracer, 'tessera.event_store.append', { attributes: { 'tessera.stream': stream, 'tessera.event.types': events.map(({ event }) => event.type) } }, async (span) => {
      const traceparent = traceparentOf(span);
      const stamped = traceparent === undefined ? events : events.map((event) => ({ ...event, metadata: { ...event.metadata, traceparent } }));
      const appended = await store.append(stream, stamped, options);
      span.setAttribute('tessera.position', Number(appended.position));
      return appended;
    }),
  );
}
