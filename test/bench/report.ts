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
  /** How far from the target: the margin when met, what is missing when not. */
  readonly distance?: string;
}

const figure = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));

/** A "≥ target" figure: met, and the margin or the shortfall (also as the factor still to gain). */
/** The middle value (the mean of the two middle ones for an even count): noise of one run moves it least. */
export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

export function atLeast(value: number, target: number, unit = ''): { met: boolean; distance: string } {
  if (!Number.isFinite(value)) return { met: false, distance: 'not measured' };
  if (value >= target) return { met: true, distance: `+${figure(value - target)}${unit} over` };
  return { met: false, distance: `${figure(target - value)}${unit} short (×${(target / value).toFixed(2)} to go)` };
}

/** A "≤ target" figure: met, and the margin or the excess (also as a factor of the target). */
export function atMost(value: number, target: number, unit = ''): { met: boolean; distance: string } {
  if (!Number.isFinite(value)) return { met: false, distance: 'not measured' };
  if (value <= target) return { met: true, distance: `${figure(target - value)}${unit} under` };
  return { met: false, distance: `${figure(value - target)}${unit} over (×${(value / target).toFixed(2)} the target)` };
}

function cell(value: number | string | boolean): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'NO';
  if (typeof value === 'string') return value;
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(2);
}

export function formatTable(rows: readonly Row[]): string {
  const header = ['what', 'Tessera', 'peer', 'ratio', 'target', 'met?', 'distance'];
  const body = rows.map((r) => [r.what, cell(r.tessera), cell(r.peer), cell(r.ratio), r.target, cell(r.met), r.distance ?? '']);
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
