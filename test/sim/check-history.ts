import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * The history checker (test/sim/linearizability, porcupine), built with Go into the cache and run
 * on a recorded history: its exit code (0 linearizable, 1 not, 2 malformed, 3 no verdict in time)
 * and what it printed. Its visualisation goes where it is asked: under test-results/, never into
 * the repository.
 */
const checkerFolder = resolve(import.meta.dirname, 'linearizability');
const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'tessera');
const run = promisify(execFile);

export interface CheckerVerdict {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

let built: Promise<string> | undefined;

/** `go build` once per run (Go's own cache makes it quick after the first), with modules cached as CI caches them. */
export function buildChecker(): Promise<string> {
  built ??= (async () => {
    const folder = join(cache, 'checkhistory');
    mkdirSync(folder, { recursive: true });
    const binary = join(folder, 'checkhistory');
    await run('go', ['build', '-o', binary, '.'], { cwd: checkerFolder, env: { ...process.env, GOMODCACHE: process.env.GOMODCACHE ?? join(cache, 'go-modules') } });
    return binary;
  })();
  return built;
}

export async function checkHistory(history: string, options: { readonly visualize?: string; readonly timeout?: string } = {}): Promise<CheckerVerdict> {
  const binary = await buildChecker();
  const args = ['--history', history, '--timeout', options.timeout ?? '120s', ...(options.visualize ? ['--visualize', options.visualize] : [])];
  try {
    const { stdout, stderr } = await run(binary, args, { maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error) };
  }
}
