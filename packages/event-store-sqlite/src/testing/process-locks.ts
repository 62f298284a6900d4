import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * The POSIX advisory locks this process holds on `file`, as the kernel lists them in /proc/locks
 * (`1: POSIX  ADVISORY  READ 3495 fe:00:9978090 128 128`): what another program's SQLite
 * connection sees when it asks whether it is the last user of the file.
 */
export function locksHeldOn(file: string, pid = process.pid): number {
  const inode = statSync(file).ino;
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1] === 'POSIX' && fields[4] === String(pid) && fields[5]?.split(':')[2] === String(inode)).length;
}

/**
 * Runs `source` (an ES module body that may `await`, with `file` and `post(value)` in scope) in a
 * new worker thread with the TypeScript sources loadable through tsx, as the server's own threads
 * load them in tests, and resolves with what it posts first. The thread stays alive until
 * terminated, so whatever it opened stays open.
 */
export async function inAnotherThread<T>(source: string, file: string): Promise<{ readonly value: T; readonly worker: Worker }> {
  const tsx = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist', 'esm', 'api', 'index.mjs')).href;
  const module = `const { register } = await import(${JSON.stringify(tsx)});
     register();
     const { parentPort, workerData: { file } } = await import('node:worker_threads');
     const post = (value) => parentPort.postMessage(value);
     ${source}
     setInterval(() => {}, 60_000);`;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(module)}`), { workerData: { file }, execArgv: ['--conditions=tessera-source'] });
  const value = await new Promise<T>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the thread exited (${code}) before it answered`)));
  });
  return { value, worker };
}
