import { execFileSync } from 'node:child_process';
import { existsSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { StartFailure } from './start-failure.js';

/** The lowest CPU priority Linux gives a thread (nice 19): it runs when the others leave the core. */
export const backgroundNice = 19;

/** This thread's: a module instance is per thread. */
let current: BackgroundThread | undefined;

/** How the calling thread was set to run in the background: its id, and whether it is SCHED_IDLE too. */
export interface BackgroundThread {
  readonly threadId: number;
  readonly idlePolicy: boolean;
}

/**
 * Lowers the calling thread's CPU priority, on Linux (where a thread has an id of its own, found
 * through /proc/thread-self): nice 19, then the SCHED_IDLE policy (`chrt --idle`, util-linux or
 * busybox), where a token request waking up takes the core from the thread at once. Nice 19 alone
 * is not enough on a core shared with the thread that answers token requests (a container with one
 * CPU, a pinned process): the scheduler may let a nice-19 thread finish its slice first (EEVDF's
 * run-to-parity), a few milliseconds a request waits, enough to move issuance p99 by a third beside
 * the admin work on a long log. Without chrt the thread stays at nice 19. Returns undefined where
 * neither is possible (not Linux): the thread then runs at the process's priority, as any would.
 */
export function runInBackground(): BackgroundThread | undefined {
  let threadId: number;
  try {
    threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(threadId) || threadId <= 0) return undefined;
  if (current?.threadId === threadId) return current;
  setPriority(threadId, backgroundNice);
  let idlePolicy = false;
  try {
    execFileSync('chrt', ['--idle', '--pid', '0', String(threadId)], { stdio: 'ignore', timeout: 5_000 });
    idlePolicy = true;
  } catch {
    // No chrt here: nice 19 it is.
  }
  current = { threadId, idlePolicy };
  return current;
}

/** What runInBackground() did in this thread (its bootstrap calls it), or undefined if it has not run or could not. */
export function currentBackgroundThread(): BackgroundThread | undefined {
  return current;
}

/**
 * A background thread's entry: a bootstrap that lowers the thread's priority (runInBackground)
 * before it loads the module `entry` (a name without extension) beside `besideUrl` (the caller's
 * import.meta.url). Loading a thread's modules is tens to hundreds of milliseconds of CPU (82 ms
 * for the families read model's, 277 ms for the audit index's): at the process's priority, on a
 * core shared with token requests, that was a stall beside the first account revocation. The
 * entry reads how it went with currentBackgroundThread(). From compiled JavaScript the bootstrap
 * loads the .js entry; from the TypeScript sources (the tests) it first registers tsx in the
 * thread, which a worker does not inherit from its parent, and `execArgv` carries the sources'
 * export condition.
 */
export function workerThreadEntry(besideUrl: string, entry: string): { readonly url: URL; readonly execArgv: string[] } {
  const here = fileURLToPath(besideUrl);
  const fromSources = here.endsWith('.ts');
  const lowerFirst = `const { runInBackground } = await import(${JSON.stringify(import.meta.url)}); runInBackground();`;
  const load = `await import(${JSON.stringify(new URL(`./${entry}.${fromSources ? 'ts' : 'js'}`, besideUrl).href)});`;
  if (!fromSources) return { url: dataModule(`${lowerFirst} ${load}`), execArgv: [] };
  const tsx = pathToFileURL(join(findPackageFolder(here, 'tsx'), 'dist', 'esm', 'api', 'index.mjs')).href;
  return { url: dataModule(`const { register } = await import(${JSON.stringify(tsx)}); register(); ${lowerFirst} ${load}`), execArgv: ['--conditions=tessera-source'] };
}

const dataModule = (source: string) => new URL(`data:text/javascript,${encodeURIComponent(source)}`);

/** node_modules/<name> in the nearest folder up from `file` that has it. */
function findPackageFolder(file: string, name: string): string {
  for (let folder = join(file, '..'); ; folder = join(folder, '..')) {
    const candidate = join(folder, 'node_modules', name);
    if (existsSync(candidate)) return candidate;
    if (folder === join(folder, '..')) throw new StartFailure(`${name} is needed to run a worker thread from the TypeScript sources`);
  }
}
