/**
 * `npm run bench:chart`: the issuance concurrency curve from a bench JSON ($BENCH_OUTPUT, as
 * `npm run bench` wrote it) as a PNG beside docs/benchmarks.md (or $BENCH_CHART).
 *
 * vega-lite compiles the chart to a vega spec, vega renders it to SVG headless (no canvas: its
 * native build downloads a prebuilt binary, which this machine cannot fetch), and resvg (its
 * binary ships inside an npm package) turns the SVG into PNG with the system's DejaVu fonts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import { repositoryRoot } from './children.js';

interface CurvePoint {
  readonly connections: number;
  readonly reqPerSec: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
}

interface BenchJson {
  readonly started: string;
  readonly node: string;
  readonly cpus: number;
  readonly cpuModel?: string;
  readonly pinning?: { readonly pinned: boolean };
  readonly loadAverages?: readonly { readonly phase: string; readonly loadavg1m: number }[];
  readonly results: { readonly curve?: { readonly tessera: CurvePoint[]; readonly oidcProvider: CurvePoint[]; readonly oidcAlg: string } };
}

const input = process.env.BENCH_OUTPUT;
if (!input) throw new Error('BENCH_OUTPUT must name the JSON that npm run bench wrote');
const output = resolve(process.env.BENCH_CHART ?? resolve(repositoryRoot, 'docs', 'benchmarks-concurrency.png'));
const bench = JSON.parse(readFileSync(input, 'utf8')) as BenchJson;
const curve = bench.results.curve;
if (!curve) throw new Error(`${input} has no concurrency curve (results.curve): run the full bench or its http part`);

const rows = [
  ...curve.tessera.map((p) => ({ server: 'Tessera (durable, SQLite synchronous=FULL)', ...p })),
  ...curve.oidcProvider.map((p) => ({ server: `oidc-provider ${curve.oidcAlg} (in memory)`, ...p })),
];
const loads = (bench.loadAverages ?? []).map((l) => l.loadavg1m);
const machine = `${bench.pinning?.pinned ? 'load generator and server pinned to one core each' : 'not pinned'}${
  loads.length ? `, 1-min load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}` : ''
}`;

const spec: vegaLite.TopLevelSpec = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  title: { text: 'get-oauth-token throughput by concurrency (HTTPS, 2xx only)', subtitle: [`${bench.started.slice(0, 16).replace('T', ' ')} UTC, ${bench.cpus} × ${bench.cpuModel ?? 'CPU'}, node ${bench.node}`, machine] },
  width: 560,
  height: 320,
  background: 'white',
  padding: 16,
  data: { values: rows },
  encoding: {
    x: { field: 'connections', type: 'quantitative', scale: { type: 'log', domain: [8, 250] }, axis: { values: rows.map((r) => r.connections), title: 'connections (autocannon, no pipelining; log scale)' } },
    y: { field: 'reqPerSec', type: 'quantitative', title: 'requests per second', scale: { zero: true } },
    color: { field: 'server', type: 'nominal', title: null, legend: { orient: 'bottom', labelLimit: 400 } },
  },
  layer: [
    { mark: { type: 'line', point: { size: 60, filled: true } } },
    {
      mark: { type: 'text', dy: -10, fontSize: 11 },
      encoding: { text: { field: 'reqPerSec', type: 'quantitative', format: '.0f' } },
    },
  ],
  config: { font: 'DejaVu Sans' },
};

const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
const svg = await view.toSVG();
view.finalize();
const png = new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, fitTo: { mode: 'zoom', value: 2 } }).render().asPng();
writeFileSync(output, png);
process.stderr.write(`wrote ${output} (${png.length} bytes) from ${input}\n`);
