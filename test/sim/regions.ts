/**
 * `npm run sim:regions`: two regions on this machine — in each a Kafka broker, an
 * all-in-one on its own SQLite folder and MirrorMaker 2, with Toxiproxy on every link between
 * them — then the scenarios of docs/multi-region.md, a table of figures, and everything stopped.
 * Each scenario asserts its outcome; the exit code is 1 if any failed.
 *
 * SIM_REVOCATIONS (default 200), SIM_REVOCATION_PARALLEL (1), SIM_REVOCATION_GAP_MS (300), SIM_LATENCY_MS (40), SIM_PARTITION_SECONDS (30),
 * SIM_PARTITION_REVOCATIONS (50), SIM_RESTART_REVOCATIONS (20), SIM_CREDENTIALS (5);
 * SIM_SUMMARY_FILE: where to write "passed failed" for CI.
 * SIM_SCENARIOS: comma-separated parts of scenario names to run (default: all), to chase one.
 */
import { writeFileSync } from 'node:fs';
import { ScenarioFailed, scenarios, type Figure, type SimSettings } from './scenarios.js';
import { startTopology } from './topology.js';

const setting = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
  return value;
};
const settings: SimSettings = {
  revocations: setting('SIM_REVOCATIONS', 200),
  revocationParallel: Math.max(1, setting('SIM_REVOCATION_PARALLEL', 1)),
  revocationGapMs: setting('SIM_REVOCATION_GAP_MS', 300),
  latencyMs: setting('SIM_LATENCY_MS', 40),
  partitionSeconds: setting('SIM_PARTITION_SECONDS', 30),
  partitionRevocations: setting('SIM_PARTITION_REVOCATIONS', 50),
  restartRevocations: setting('SIM_RESTART_REVOCATIONS', 20),
  credentials: setting('SIM_CREDENTIALS', 5),
};
const progress = (line: string) => process.stderr.write(`[sim] ${line}\n`);

const started = Date.now();
const figures: Figure[] = [];
const outcomes: { name: string; error?: string }[] = [];
const topology = await startTopology(progress);
const stop = async () => {
  progress('stopping everything');
  await topology.stop();
};
process.once('SIGINT', () => void stop().then(() => process.exit(130)));
process.once('SIGTERM', () => void stop().then(() => process.exit(143)));

try {
  progress(`topology up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const account = await topology.a.server.createAccount({ name: 'sim-roaming' });
  const run = scenarios(topology, account, settings);
  const steps: [string, () => Promise<Figure[]>][] = [
    ['credential propagation, no injected latency', () => run.credentialPropagation('no injected latency')],
    ['revocation across regions, no injected latency', () => run.revocationAcrossRegions('no injected latency')],
    ['roaming client, no injected latency', () => run.roamingClient('no injected latency')],
    [`latency ${settings.latencyMs} ms each way`, async () => (await topology.setLatency(settings.latencyMs), [])],
    [`credential propagation, ${settings.latencyMs} ms`, () => run.credentialPropagation(`${settings.latencyMs} ms each way`)],
    [`revocation across regions, ${settings.latencyMs} ms`, () => run.revocationAcrossRegions(`${settings.latencyMs} ms each way`)],
    [`roaming client, ${settings.latencyMs} ms`, () => run.roamingClient(`${settings.latencyMs} ms each way`)],
    ['partition', () => run.partition()],
    ['MirrorMaker 2 and broker restarts', () => run.mirrorAndBrokerRestarts()],
  ];
  const only = (process.env.SIM_SCENARIOS ?? '').split(',').map((part) => part.trim()).filter((part) => part !== '');
  for (const [name, step] of steps) {
    if (only.length > 0 && !only.some((part) => name.includes(part))) continue;
    progress(`scenario: ${name}`);
    try {
      figures.push(...(await step()));
      outcomes.push({ name });
    } catch (error) {
      const message = error instanceof ScenarioFailed ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
      outcomes.push({ name, error: message });
      progress(`FAILED: ${name}: ${message}`);
      // What each region said at warn level and above: a failure in CI is otherwise a single line.
      for (const region of [topology.a, topology.b]) progress(`region ${region.name}'s log, last 40 lines:\n${region.server.logs().split('\n').slice(-41).join('\n')}`);
    }
  }
} finally {
  await stop();
}

const width = (column: (figure: Figure) => string, title: string) => Math.max(title.length, ...figures.map((figure) => column(figure).length));
const columns = [
  ['scenario', (figure: Figure) => figure.scenario],
  ['measure', (figure: Figure) => figure.measure],
  ['value', (figure: Figure) => figure.value],
] as const;
const widths = columns.map(([title, column]) => width(column, title));
const row = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
console.log(`\nTwo regions on one machine (${settings.latencyMs} ms injected each way where stated; Toxiproxy, MirrorMaker 2, Kafka 3.9.1)\n`);
console.log(row(columns.map(([title]) => title)));
console.log(row(widths.map((w) => '-'.repeat(w))));
for (const figure of figures) console.log(row(columns.map(([, column]) => column(figure))));
const failed = outcomes.filter((outcome) => outcome.error !== undefined);
console.log('');
for (const outcome of outcomes) console.log(`${outcome.error === undefined ? 'PASS' : 'FAIL'} ${outcome.name}${outcome.error === undefined ? '' : `: ${outcome.error.split('\n')[0]}`}`);
console.log(`\nsim:regions: ${outcomes.length - failed.length} passed, ${failed.length} failed, in ${((Date.now() - started) / 1000).toFixed(0)} s`);
if (process.env.SIM_SUMMARY_FILE) writeFileSync(process.env.SIM_SUMMARY_FILE, `${outcomes.length - failed.length} ${failed.length}\n`);
process.exit(failed.length === 0 ? 0 : 1);
