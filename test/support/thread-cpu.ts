import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/**
 * CPU seconds (user + system) the calling thread has used, from /proc/thread-self/stat (Linux):
 * with process.cpuUsage(), which counts every thread, it tells how much of a process's work ran on
 * the thread that answers requests. Clock-tick resolution (10 ms at the usual 100 Hz).
 */
export function threadCpuSeconds(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line; the split starts at field 3.
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** CPU seconds every thread of this process has used. */
export function processCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
