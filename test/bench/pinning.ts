import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * Fair measurement: the load generator (autocannon, in the bench process)
 * on one core and the server under test on the other, for Tessera and every peer alike, so the
 * two do not take turns on the same core by the scheduler's whim. Pinned with `taskset`; when
 * it is missing, or the machine has one core, nothing is pinned and the report says so.
 * BENCH_PIN=0 turns pinning off on purpose (to compare).
 */
export interface Pinning {
  readonly pinned: boolean;
  /** Why nothing is pinned, when it is not. */
  readonly reason?: string;
  /** CPU list (taskset -c syntax) of the bench process while it generates load. */
  readonly loadGeneratorCpus: string;
  /** CPU list of every server under load. */
  readonly serverCpus: string;
  /** Every CPU: the bench's other parts (broker, projection, audit) run unpinned, as before. */
  readonly allCpus: string;
}

export function detectPinning(): Pinning {
  const count = cpus().length;
  const allCpus = `0-${count - 1}`;
  const off = (reason: string): Pinning => ({ pinned: false, reason, loadGeneratorCpus: allCpus, serverCpus: allCpus, allCpus });
  if (process.env.BENCH_PIN === '0') return off('BENCH_PIN=0');
  if (count < 2) return off(`only ${count} CPU: no core to keep apart`);
  const probe = spawnSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return off(`taskset not usable here (${probe.error?.message ?? probe.stderr.trim()}); install util-linux`);
  // With more than two cores, the load generator keeps core 0 and the servers get the rest minus one, so neither starves.
  return { pinned: true, loadGeneratorCpus: '0', serverCpus: count === 2 ? '1' : `1-${count - 1}`, allCpus };
}

/** Sets the affinity of every thread of this process (autocannon runs here; libuv's pool threads too). */
export function pinBenchProcess(pinning: Pinning, cpuList: string): void {
  if (!pinning.pinned) return;
  execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(process.pid)], { stdio: 'ignore' });
}

/** `taskset -c <cpus>` before a command when pinning is on; taskset execs, so the pid is the command's. */
export function pinnedCommand(pinning: Pinning, cpuList: string, command: readonly string[]): string[] {
  return pinning.pinned ? ['taskset', '-c', cpuList, ...command] : [...command];
}

/** The CPUs a process may run on, as the kernel has it (for the report: proof, not intent). */
export function allowedCpus(pid: number): string {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Cpus_allowed_list:'));
    return line?.split(':')[1]?.trim() ?? '?';
  } catch {
    return '?';
  }
}

export function describePinning(pinning: Pinning): string {
  return pinning.pinned
    ? `pinned with taskset: load generator (autocannon, bench process) on CPU ${pinning.loadGeneratorCpus}, every server under load on CPU ${pinning.serverCpus}`
    : `NOT pinned (${pinning.reason}): load generator and servers share all ${cpus().length} CPUs`;
}
