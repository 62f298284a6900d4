import { Counter, Gauge } from 'prom-client';
import type { Metrics } from '@tessera/host';
import type { Transmitter } from './delivery/transmitter.js';

/**
 * Per stream (label stream_id), registered at start so the families are on /metrics before the
 * first stream exists: what is pending, delivered, failed, paused, and the age of the oldest
 * undelivered SET, the figure to alert on.
 */
export function registerSsfMetrics(metrics: Metrics, transmitter: () => Transmitter | undefined) {
  const labelNames = ['stream_id'] as const;
  const registers = [metrics.registry];
  new Gauge({
    name: 'tessera_ssf_pending_sets',
    help: 'SETs of a Shared Signals stream read from the log and not yet delivered (push) or acknowledged (poll)',
    labelNames,
    registers,
    collect() {
      this.reset();
      for (const worker of transmitter()?.streams ?? []) this.set({ stream_id: worker.streamId }, worker.pending);
    },
  });
  new Gauge({
    name: 'tessera_ssf_oldest_pending_seconds',
    help: 'Age of the oldest SET of a Shared Signals stream not yet delivered or acknowledged, from when the log recorded its event',
    labelNames,
    registers,
    collect() {
      this.reset();
      for (const worker of transmitter()?.streams ?? []) this.set({ stream_id: worker.streamId }, worker.oldestPendingMs() / 1000);
    },
  });
  const delivered = new Counter({ name: 'tessera_ssf_delivered_total', help: 'SETs a Shared Signals receiver accepted (push: 2xx; poll: acknowledged) since start', labelNames, registers });
  const failed = new Counter({
    name: 'tessera_ssf_failed_total',
    help: 'Failed Shared Signals deliveries since start: push attempts that failed (retried), polls whose setErrs kept a SET (answered again), and dropped SETs',
    labelNames,
    registers,
  });
  const dropped = new Counter({
    name: 'tessera_ssf_dropped_total',
    help: 'SETs a Shared Signals receiver refused as malformed (invalid_request, pushed or in setErrs, and not within 15 minutes of a signing-key rotation): dropped, never sent again',
    labelNames,
    registers,
  });
  const paused = new Counter({ name: 'tessera_ssf_paused_total', help: 'Shared Signals streams the transmitter paused: delivery failing for TESSERA_SSF_PAUSE_AFTER, or fallen behind retention', labelNames, registers });
  return {
    delivered: (streamId: string) => delivered.inc({ stream_id: streamId }),
    failed: (streamId: string) => failed.inc({ stream_id: streamId }),
    paused: (streamId: string) => paused.inc({ stream_id: streamId }),
    dropped: (streamId: string) => {
      // A drop is a failed delivery too: tessera_ssf_failed_total keeps counting it, as before.
      failed.inc({ stream_id: streamId });
      dropped.inc({ stream_id: streamId });
    },
    forget: (streamId: string) => {
      for (const counter of [delivered, failed, dropped, paused]) counter.remove({ stream_id: streamId });
    },
  };
}
