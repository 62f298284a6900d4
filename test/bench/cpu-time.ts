import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { load, warmUp, type LoadResult, type LoadTarget } from './load.js';

/**
 * Server CPU per operation: a figure that noise on a shared machine hurts
 * less than req/s. At a fixed offered rate, well below saturation, the server's own CPU time is
 * read from /proc/<pid>/stat before and after the measured window; divided by the 2xx answers.
 * utime + stime in /proc/<pid>/stat add up every thread of the process: the main thread, the
 * SQLite writer thread (a worker thread in the same process), libuv's pool and V8's GC threads.
 */
let clockTicksPerSecond: number | undefined;

function ticksPerSecond(): number {
  if (clockTicksPerSecond === undefined) {
    try {
      clockTicksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      // getconf missing: Linux's USER_HZ is 100 on every architecture Node supports.
      clockTicksPerSecond = 100;
    }
  }
  return clockTicksPerSecond;
}

/** CPU seconds (user + system) the process has used so far, all threads. */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12 here.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`cannot read CPU times from /proc/${pid}/stat`);
  return (utime + stime) / ticksPerSecond();
}

/**
 * Seconds the process's threads have spent runnable but waiting for a CPU, summed over every
 * thread alive now (/proc/<pid>/task/<tid>/schedstat, second field, in ns): the queueing for a
 * core that no code of ours can remove. Undefined when the kernel does not keep schedstats.
 */
export function processRunQueueWaitSeconds(pid: number): number | undefined {
  try {
    let waitedNs = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(' ');
      waitedNs += Number(fields[1]);
    }
    return Number.isFinite(waitedNs) ? waitedNs / 1e9 : undefined;
  } catch {
    return undefined;
  }
}

export interface CpuPerOperation {
  readonly offeredRate: number;
  readonly connections: number;
  readonly seconds: number;
  /** 2xx answers in the measured window. */
  readonly operations: number;
  readonly achievedRate: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly cpuSeconds: number;
  /** The figure: µs of server CPU per 2xx answer. */
  readonly microsPerOperation: number;
  /** Share of one core the server used at this rate. */
  readonly coreShare: number;
  /** /proc's clock resolution over the operations, µs: the figure is ± this. */
  readonly resolutionMicros: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  /** How long the server took to be quiet before the run (untilQuiet), ms. */
  readonly quietAfterMs: number;
}

/** Called after the warm-up, just before the measured window; what it returns is called just after it (e.g. reading /metrics). */
export type Bracket = () => Promise<() => Promise<void>>;

export interface CpuRunOptions {
  readonly rate: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
}

/**
 * Once the server is quiet (untilQuiet), a warm-up at the same rate (not measured), then the
 * measured window. Without the wait, the window took the background work that the run before
 * left behind (the audit index catching up on a full-load run's events, at the lowest CPU
 * priority, so only once the load eased): a refresh read 1,155 and 1,220 µs right after 40 s of
 * full load, and 733 and 981 µs after a wait of 0.5–1 s. The window's own events are indexed in
 * the window: at this rate the core has time to spare. The window includes the TLS handshakes of
 * its own `connections` new connections, each opened with one request that is not counted
 * (pacedLoad opens them before its clock starts): with 10 connections and thousands of requests
 * that is a few µs per operation, which the report notes.
 */
export async function measureCpuPerOperation(target: LoadTarget, pid: number, options: CpuRunOptions, bracket?: Bracket): Promise<CpuPerOperation> {
  const loadOptions = { seconds: options.seconds, connections: options.connections, overallRate: options.rate };
  const quietAfterMs = await untilQuiet(pid);
  await warmUp(target, { ...loadOptions, seconds: options.warmupSeconds });
  const finish = await bracket?.();
  const before = processCpuSeconds(pid);
  const result: LoadResult = await load(target, loadOptions);
  const cpuSeconds = processCpuSeconds(pid) - before;
  await finish?.();
  const operations = Math.round(result.reqPerSec * result.seconds);
  return {
    offeredRate: options.rate,
    connections: options.connections,
    seconds: result.seconds,
    operations,
    achievedRate: result.reqPerSec,
    non2xx: result.non2xx,
    errors: result.errors,
    cpuSeconds,
    microsPerOperation: operations === 0 ? Infinity : (cpuSeconds / operations) * 1e6,
    coreShare: cpuSeconds / result.seconds,
    resolutionMicros: operations === 0 ? Infinity : (1 / ticksPerSecond() / operations) * 1e6,
    latencyP50Ms: result.latencyP50Ms,
    latencyP99Ms: result.latencyP99Ms,
    quietAfterMs,
  };
}

export function describeCpu(name: string, cpu: CpuPerOperation): string {
  return (
    `${name}: ${cpu.microsPerOperation.toFixed(0)} µs server CPU per 2xx (±${cpu.resolutionMicros.toFixed(1)}) at ${cpu.offeredRate} req/s offered, ` +
    `${cpu.achievedRate.toFixed(0)} achieved, ${cpu.operations} ops in ${cpu.seconds.toFixed(1)} s over ${cpu.connections} connections, ` +
    `${(cpu.coreShare * 100).toFixed(0)}% of a core, p50 ${cpu.latencyP50Ms} ms / p99 ${cpu.latencyP99Ms} ms, non-2xx ${cpu.non2xx}, errors ${cpu.errors}, quiet before it after ${cpu.quietAfterMs} ms`
  );
}

/**
 * Resolves once the process is quiet: under 5% of a core over half a second, or after `atMostMs`.
 * A server that has just served writes catches up in the background (its log followers, the audit
 * index), on the same pinned core; a run that starts before that ends charges the catch-up to the
 * requests it measures.
 */
export async function untilQuiet(pid: number, atMostMs = 60_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const before = processCpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (processCpuSeconds(pid) - before < 0.025 || Date.now() - started >= atMostMs) return Date.now() - started;
  }
}
