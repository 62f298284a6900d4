import { existsSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The lowest CPU priority Linux gives a thread (nice 19): it runs when the others leave the core. */
export const backgroundNice = 19;

/**
 * Lowers the calling thread's CPU priority to nice 19, on Linux (where a thread has an id of its
 * own that setpriority(2) takes, found through /proc/thread-self). Where a background thread shares a
 * core with the thread that answers token requests (a container with one CPU, a pinned process),
 * the scheduler then gives that core to token requests first, and the thread takes what is left.
 * Returns the thread id it lowered, or undefined where that is not possible (not Linux): the
 * thread then runs at the process's priority, as any thread would.
 */
export function runInBackground(): number | undefined {
  let threadId: number;
  try {
    threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(threadId) || threadId <= 0) return undefined;
  setPriority(threadId, backgroundNice);
  return threadId;
}

/**
 * A worker thread's entry, the module `entry` (a name without extension) beside `besideUrl` (the
 * caller's import.meta.url): the compiled .js from compiled JavaScript; from the TypeScript sources
 * (the tests), a bootstrap that registers tsx in the thread and then loads the .ts entry, since a
 * worker does not inherit the loader its parent runs under. `execArgv` carries the sources' export
 * condition in that case.
 */
export function workerThreadEntry(besideUrl: string, entry: string): { readonly url: URL; readonly execArgv: string[] } {
  const here = fileURLToPath(besideUrl);
  if (!here.endsWith('.ts')) return { url: new URL(`./${entry}.js`, besideUrl), execArgv: [] };
  const tsx = pathToFileURL(join(findPackageFolder(here, 'tsx'), 'dist', 'esm', 'api', 'index.mjs')).href;
  const source = new URL(`./${entry}.ts`, besideUrl).href;
  const bootstrap = `const { register } = await import(${JSON.stringify(tsx)}); register(); await import(${JSON.stringify(source)});`;
  return { url: new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`), execArgv: ['--conditions=tessera-source'] };
}

/** node_modules/<name> in the nearest folder up from `file` that has it. */
function findPackageFolder(file: string, name: string): string {
  for (let folder = join(file, '..'); ; folder = join(folder, '..')) {
    const candidate = join(folder, 'node_modules', name);
    if (existsSync(candidate)) return candidate;
    if (folder === join(folder, '..')) throw new Error(`${name} is needed to run a worker thread from the TypeScript sources`);
  }
}
