import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { backgroundNice, workerThreadEntry, type BackgroundThread } from './background-thread.js';

/** Fields of one thread's stat line in /proc, counted from the state (field 3) on. */
function statOf(threadId: number): string[] {
  const stat = readFileSync(`/proc/${process.pid}/task/${threadId}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
/** nice is field 19 of the stat line, the scheduling policy field 41 (SCHED_IDLE is 5). */
const niceOf = (threadId: number) => Number(statOf(threadId)[16]);
const policyOf = (threadId: number) => Number(statOf(threadId)[38]);
const schedIdle = 5;

const chrtHere = (() => {
  try {
    execFileSync('chrt', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.runIf(process.platform === 'linux')('running a thread in the background', () => {
  it(`lowers that thread to nice 19 and, with chrt (${chrtHere ? 'found' : 'NOT found here: only nice 19 is checked'}), to SCHED_IDLE, and leaves the main thread as it was`, async () => {
    const mainNice = niceOf(process.pid);
    const mainPolicy = policyOf(process.pid);
    // The worker imports the compiled-or-source module the way the background threads do: through tsx.
    const worker = new Worker(
      `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(new URL('./background-thread.ts', import.meta.url).href)}); })
        .then(({ runInBackground }) => require('node:worker_threads').parentPort.postMessage(runInBackground()));
      // Alive until terminated: a thread that has exited has no /proc entry left to read.
      setInterval(() => {}, 60_000);`,
      { eval: true },
    );
    const background = await new Promise<BackgroundThread | undefined>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    expect(background?.threadId).toBeGreaterThan(0);
    expect(niceOf(background!.threadId)).toBe(backgroundNice);
    expect(background?.idlePolicy).toBe(chrtHere);
    if (chrtHere) expect(policyOf(background!.threadId)).toBe(schedIdle);
    expect(niceOf(process.pid)).toBe(mainNice);
    expect(policyOf(process.pid)).toBe(mainPolicy);
    await worker.terminate();
  });

  it('a background thread started through workerThreadEntry is lowered before its entry module loads', async () => {
    const entry = workerThreadEntry(import.meta.url, 'background-thread-probe.test');
    const worker = new Worker(entry.url, { execArgv: entry.execArgv });
    const found = await new Promise<{ nice: number; policy: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    expect(found.nice).toBe(backgroundNice);
    if (chrtHere) expect(found.policy).toBe(schedIdle);
    await worker.terminate();
  });
});
