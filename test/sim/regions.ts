/**
 * `npm run sim:regions`: two regions on this machine — in each a Kafka broker, an
 * all-in-one on its own SQLite folder and MirrorMaker 2, with Toxiproxy on every link between
 * them — then the scenarios of docs/multi-region.md, a table of figures, and everything stopped.
 * Each scenario asserts its outcome; the exit code is 1 if any failed. Every client operation
 * (the scenarios' and a background workload's) is recorded, and the history is checked for
 * linearizability with porcupine (test/sim/linearizability) as the last scenario.
 *
 * SIM_REVOCATIONS (default 200), SIM_REVOCATION_PARALLEL (1), SIM_REVOCATION_GAP_MS (300), SIM_LATENCY_MS (40), SIM_PARTITION_SECONDS (30),
 * SIM_PARTITION_REVOCATIONS (50), SIM_RESTART_REVOCATIONS (20), SIM_CREDENTIALS (5), SIM_REMOTE_REVOCATIONS (100),
 * SIM_LOST_REVOCATIONS (20), SIM_WORKLOAD_CLIENTS (4), SIM_WORKLOAD_PAUSE_MS (40-120);
 * SIM_SEED: the seed of every random choice (printed at the start; the same seed makes the same choices);
 * SIM_HISTORY_DIR (test-results/sim-regions): the history, porcupine's visualisation and a summary line;
 * SIM_SUMMARY_FILE: where to write "passed failed" for CI.
 * SIM_SCENARIOS: comma-separated parts of scenario names to run (default: all), to chase one.
 */
import { randomInt } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkHistory } from './check-history.js';
import { HistoryRecorder } from './history.js';
import { familyTopicVolume } from './scenario-family-topic.js';
import { regionLost } from './scenario-region-lost.js';
import { seededBug } from './scenario-seeded-bug.js';
import { ScenarioFailed, scenarios, type Figure, type SimSettings } from './scenarios.js';
import { seededRandom } from './seeded-random.js';
import { simClients } from './sim-clients.js';
import { startTopology } from './topology.js';
import { startWorkload } from './workload.js';

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
  remoteRevocations: setting('SIM_REMOTE_REVOCATIONS', 100),
};
const lostRevocations = setting('SIM_LOST_REVOCATIONS', 20);
const workloadClients = setting('SIM_WORKLOAD_CLIENTS', 4);
const [pauseLow, pauseHigh] = (process.env.SIM_WORKLOAD_PAUSE_MS ?? '40-120').split('-').map(Number) as [number, number];
const seed = process.env.SIM_SEED === undefined ? randomInt(2 ** 31) : Number(process.env.SIM_SEED);
if (!Number.isInteger(seed) || seed < 0) throw new Error('SIM_SEED must be a non-negative integer');
const historyDir = resolve(process.env.SIM_HISTORY_DIR ?? join(import.meta.dirname, '..', '..', 'test-results', 'sim-regions'));
/** Operations the history must hold for its check to count, when every scenario ran. */
const minimumOperations = 5000;
const progress = (line: string) => process.stderr.write(`[sim] ${line}\n`);
progress(`seed ${seed} (SIM_SEED=${seed} makes the same choices again)`);

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

let historySummary = 'no history checked';
try {
  progress(`topology up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const account = await topology.a.server.createAccount({ name: 'sim-roaming' });
  const recorder = new HistoryRecorder();
  const random = seededRandom(seed);
  const workload = startWorkload({
    origins: { a: topology.a.http.origin, b: topology.b.http.origin },
    ca: topology.ca,
    account,
    recorder,
    random: seededRandom(seed + 1),
    clients: workloadClients,
    pauseMs: [pauseLow, pauseHigh],
    // The workload's refused refreshes are spread over addresses of their own, off the scenarios' failure budgets.
    addresses: Array.from({ length: 32 }, (_, i) => `127.0.1.${i + 1}`),
  });
  const context = {
    recorder,
    random,
    quietly: async <T,>(measure: () => Promise<T>): Promise<T> => {
      await workload.pause();
      try {
        return await measure();
      } finally {
        workload.resume();
      }
    },
  };
  const run = scenarios(topology, account, settings, context);
  mkdirSync(historyDir, { recursive: true });
  // Steps whose figures are latencies measured one request at a time run with the workload paused.
  const steps: [string, () => Promise<Figure[]>, 'quiet'?][] = [
    ['credential propagation, no injected latency', () => run.credentialPropagation('no injected latency')],
    ['revocation across regions, no injected latency', () => run.revocationAcrossRegions('no injected latency'), 'quiet'],
    ['roaming client, no injected latency', () => run.roamingClient('no injected latency')],
    [`latency ${settings.latencyMs} ms each way`, async () => (await topology.setLatency(settings.latencyMs), [])],
    [`credential propagation, ${settings.latencyMs} ms`, () => run.credentialPropagation(`${settings.latencyMs} ms each way`)],
    [`revocation across regions, ${settings.latencyMs} ms`, () => run.revocationAcrossRegions(`${settings.latencyMs} ms each way`), 'quiet'],
    [`roaming client, ${settings.latencyMs} ms`, () => run.roamingClient(`${settings.latencyMs} ms each way`)],
    ['partition, with revoke from anywhere', () => run.partition()],
    ['MirrorMaker 2 and broker restarts', () => run.mirrorAndBrokerRestarts()],
    ['region lost: revoke from anywhere, control-region failover', () => regionLost(topology, simClients(topology, account, context), context, { revocations: lostRevocations })],
    ['family topic volume', () => familyTopicVolume(topology)],
    ['seeded bug caught by the history checker', () => seededBug(topology, account, context, join(historyDir, 'seeded-bug-history.jsonl'))],
  ];
  const only = (process.env.SIM_SCENARIOS ?? '').split(',').map((part) => part.trim()).filter((part) => part !== '');
  const runStep = async (name: string, step: () => Promise<Figure[]>) => {
    progress(`scenario: ${name}`);
    try {
      figures.push(...(await step()));
      outcomes.push({ name });
    } catch (error) {
      const message = error instanceof ScenarioFailed ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
      outcomes.push({ name, error: message });
      progress(`FAILED: ${name} (seed ${seed}): ${message}`);
      // What each region said at warn level and above: a failure in CI is otherwise a single line.
      for (const region of [topology.a, topology.b]) progress(`region ${region.name}'s log, last 40 lines:\n${region.server.logs().split('\n').slice(-41).join('\n')}`);
    }
  };
  for (const [name, step, quiet] of steps) {
    if (only.length > 0 && !only.some((part) => name.includes(part))) continue;
    if (quiet) await workload.pause();
    await runStep(name, step);
    if (quiet) workload.resume();
  }
  const { requests } = await workload.stop();
  progress(`workload: ${requests} requests`);

  // Jepsen's question of the whole run: is every answer a client got explained by one order of the operations?
  await runStep('history checked for linearizability (porcupine)', async () => {
    const history = join(historyDir, 'history.jsonl');
    recorder.write(history);
    const verdict = await checkHistory(history, { visualize: join(historyDir, 'history.html') });
    const checked = /^linearizable: (\d+) operations over (\d+) families/.exec(verdict.stdout);
    historySummary = checked ? `${checked[1]} operations over ${checked[2]} families checked, 0 violations (seed ${seed})` : `not checked: exit ${verdict.code} (seed ${seed})`;
    writeFileSync(join(historyDir, 'summary.txt'), `${historySummary}\n`);
    if (!checked) throw new ScenarioFailed(`the history is not linearizable (exit ${verdict.code}; ${history}, visualisation ${join(historyDir, 'history.html')}):\n${verdict.stdout}${verdict.stderr}`);
    if (only.length === 0 && Number(checked[1]) < minimumOperations) throw new ScenarioFailed(`the history holds ${checked[1]} operations, fewer than the ${minimumOperations} a run must check`);
    return [{ scenario: 'history of every client operation (porcupine)', measure: `linearizable, workload of ${workloadClients} clients + scenarios`, value: `${checked[1]} operations over ${checked[2]} families, 0 violations; ${join('test-results', 'sim-regions', 'history.html')}` }];
  });
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
console.log(`\nhistory: ${historySummary}`);
console.log(`\nsim:regions: ${outcomes.length - failed.length} passed, ${failed.length} failed, in ${((Date.now() - started) / 1000).toFixed(0)} s (seed ${seed})`);
if (process.env.SIM_SUMMARY_FILE) writeFileSync(process.env.SIM_SUMMARY_FILE, `${outcomes.length - failed.length} ${failed.length}\n`);
process.exit(failed.length === 0 ? 0 : 1);
