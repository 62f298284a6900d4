import { call } from './api.js';
import { button, element, showPage, table, time } from './dom.js';
import { hasScope, notAllowed } from './session.js';

interface Receiver {
  readonly receiver_id: string;
  readonly name: string;
  readonly accounts?: readonly string[];
  readonly created: string;
  readonly revoked: string | null;
}
interface StreamRow {
  readonly stream_id: string;
  readonly status: string;
  readonly reason: string | null;
  readonly delivery_method: string;
  readonly endpoint_url: string | null;
  readonly delivered_here: boolean;
  readonly pending_sets: number | null;
  readonly oldest_pending_seconds: number | null;
  readonly last_delivery: string | null;
  readonly dropped_sets: number | null;
  readonly last_drop: { jti: string; err: string; at: string } | null;
}

/** Shared Signals receivers, and each one's streams with their delivery. */
export async function showSignals(): Promise<void> {
  if (!hasScope('ssf:receivers')) {
    showPage('Shared Signals receivers', notAllowed('ssf:receivers'));
    return;
  }
  const streams = element('div', { id: 'streams' });
  const { receivers } = await call<{ receivers: readonly Receiver[] }>('GET', '/admin/v1/ssf/receivers');
  showPage(
    'Shared Signals receivers',
    receivers.length === 0
      ? element('p', {}, 'No receiver yet (tessera ssf-receivers create, or POST /admin/v1/ssf/receivers).')
      : table(
          'Receivers',
          ['Name', 'Receiver ID', 'Accounts', 'Created', 'Revoked', 'Streams'],
          receivers.map((receiver) => [
            receiver.name,
            element('code', {}, receiver.receiver_id),
            receiver.accounts?.join(', ') ?? 'every account',
            time(receiver.created),
            time(receiver.revoked),
            button('Streams', () => showStreams(receiver, streams), { 'aria-label': `Streams of ${receiver.name}` }),
          ]),
        ),
    streams,
  );
}

async function showStreams(receiver: Receiver, into: HTMLElement): Promise<void> {
  const { streams } = await call<{ streams: readonly StreamRow[] }>('GET', `/admin/v1/ssf/receivers/${encodeURIComponent(receiver.receiver_id)}/streams`);
  into.replaceChildren(
    element('h2', { id: 'streams-title', tabindex: '-1' }, `Streams of ${receiver.name}`),
    streams.length === 0
      ? element('p', {}, 'No stream.')
      : table(
          `Streams of ${receiver.name}`,
          ['Stream', 'Status', 'Delivery', 'Pending SETs', 'Oldest pending', 'Last delivery', 'Dropped', 'Last drop'],
          streams.map((stream) => [
            element('code', {}, stream.stream_id),
            stream.reason ? `${stream.status} (${stream.reason})` : stream.status,
            stream.endpoint_url ? `${stream.delivery_method} to ${stream.endpoint_url}` : stream.delivery_method,
            stream.delivered_here ? String(stream.pending_sets) : 'not delivered from this replica (ask the lease holder)',
            stream.oldest_pending_seconds === null ? '-' : `${Math.round(stream.oldest_pending_seconds)} s`,
            time(stream.last_delivery),
            stream.dropped_sets === null ? '-' : String(stream.dropped_sets),
            stream.last_drop ? `${stream.last_drop.err} (${stream.last_drop.jti})` : '-',
          ]),
        ),
  );
  into.querySelector<HTMLElement>('#streams-title')?.focus();
}
