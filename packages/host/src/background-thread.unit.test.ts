import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { backgroundNice } from './background-thread.js';

/** The nice value of one thread of this process, from /proc (field 19 of its stat line). */
function niceOf(threadId: number): number {
  const stat = readFileSync(`/proc/${process.pid}/task/${threadId}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

describe.runIf(process.platform === 'linux')('running a thread in the background', () => {
  it('lowers that thread to nice 19 and leaves the main thread as it was', async () => {
    const mainNice = niceOf(process.pid);
    // The worker imports the compiled-or-source module the way the background threads do: through tsx.
    const worker = new Worker(
      `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(new URL('./background-thread.ts', import.meta.url).href)}); })
        .then(({ runInBackground }) => require('node:worker_threads').parentPort.postMessage(runInBackground()));`,
      { eval: true },
    );
    const threadId = await new Promise<number | undefined>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    expect(threadId).toBeGreaterThan(0);
    expect(niceOf(threadId!)).toBe(backgroundNice);
    expect(niceOf(process.pid)).toBe(mainNice);
    await worker.terminate();
  });
});
