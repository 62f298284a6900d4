import { writeFileSync } from 'node:fs';
import type { LoadResult } from './load.js';

/** One line of the final table. Numbers stay numbers in the JSON; the table formats them. */
export interface Row {
  readonly what: string;
  readonly tessera: number | string;
  readonly peer: number | string;
  readonly ratio: number | string;
  readonly target: string;
  readonly met: boolean | '—';
}

function cell(value: number | string | boolean): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'NO';
  if (typeof value === 'string') return value;
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(2);
}

export function formatTable(rows: readonly Row[]): string {
  const header = ['what', 'Tessera', 'peer', 'ratio', 'target', 'met?'];
  const body = rows.map((r) => [r.what, cell(r.tessera), cell(r.peer), cell(r.ratio), r.target, cell(r.met)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => (line[i] ?? '').length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  return [line(header), `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...body.map(line)].join('\n');
}

export function describeLoad(name: string, result: LoadResult): string {
  const codes = Object.entries(result.statusCodes).map(([code, count]) => `${code}×${count}`).join(' ');
  return (
    `${name}: ${result.reqPerSec.toFixed(0)} req/s (2xx), p50 ${result.latencyP50Ms} ms, p99 ${result.latencyP99Ms} ms, ` +
    `${result.responses} responses in ${result.seconds.toFixed(1)} s over ${result.connections} connections, ` +
    `non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts} [${codes}]`
  );
}

export function writeJson(file: string, data: unknown): void {
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}
