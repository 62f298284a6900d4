import { startChild } from './children.js';
import { atMost, type Row } from './report.js';

/** Parent side of audit-index-child.ts: its own process, so its heap and SQLite caches are its own. */
export interface AuditIndexResult {
  readonly events: number;
  readonly accounts: number;
  readonly logSetupSeconds: number;
  readonly logFileBytes: number;
  readonly rebuildSeconds: number;
  readonly indexFileBytes: number;
  readonly eventsByAccount: LatencySummary & { readonly rowsPerPage: number };
  readonly accessAt: LatencySummary & { readonly usablePerAnswer: number };
}

interface LatencySummary {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export async function measureAuditIndex(): Promise<AuditIndexResult> {
  const child = await startChild<AuditIndexResult>('audit-index-child.ts', {
    nodeFlags: ['--max-old-space-size=4096'],
    timeoutMs: 20 * 60_000,
    forwardStderr: true,
  });
  await child.stop();
  return child.ready;
}

/** The audit targets (docs/benchmarks.md), met by the slowest of the measured answers (p99 is shown too). */
export function auditRows(result: AuditIndexResult): Row[] {
  const size = result.events === 1_000_000 ? '1M' : String(result.events);
  const latency = (summary: LatencySummary) => `${summary.p50Ms.toFixed(1)} / ${summary.p99Ms.toFixed(1)} / ${summary.maxMs.toFixed(1)}`;
  return [
    { what: `audit: events?account= first page, p50 / p99 / max ms (${size} events)`, tessera: latency(result.eventsByAccount), peer: '—', ratio: '—', target: '≤ 100', ...atMost(result.eventsByAccount.maxMs, 100, ' ms') },
    { what: `audit: access-at, p50 / p99 / max ms (${size} events)`, tessera: latency(result.accessAt), peer: '—', ratio: '—', target: '≤ 200', ...atMost(result.accessAt.maxMs, 200, ' ms') },
    { what: `audit: index rebuild from the log, s (${size} events)`, tessera: result.rebuildSeconds, peer: '—', ratio: '—', target: '≤ 30', ...atMost(result.rebuildSeconds, 30, ' s') },
  ];
}

export function describeAudit(result: AuditIndexResult): string {
  return (
    `audit index: ${result.events} events over ${result.accounts} accounts (log ${(result.logFileBytes / 1e6).toFixed(0)} MB, written directly in ${result.logSetupSeconds.toFixed(1)} s as setup); ` +
    `rebuilt in ${result.rebuildSeconds.toFixed(1)} s into ${(result.indexFileBytes / 1e6).toFixed(0)} MB; ` +
    `${result.eventsByAccount.samples} events?account= first pages (${result.eventsByAccount.rowsPerPage.toFixed(0)} rows each) and ` +
    `${result.accessAt.samples} access-at answers (${result.accessAt.usablePerAnswer.toFixed(2)} usable tokens each) through inject()`
  );
}
