import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * Every process the bench starts is registered here and killed when the bench ends, however
 * it ends: normal exit, a thrown error, Ctrl-C or SIGTERM.
 */
const cleanups = new Set<() => void>();

export function onCleanup(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

export function cleanupAll(): void {
  for (const cleanup of [...cleanups]) {
    cleanups.delete(cleanup);
    try {
      cleanup();
    } catch {
      // Already gone; keep cleaning the rest.
    }
  }
}

process.once('exit', cleanupAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanupAll();
    process.exit(130);
  });
}

export const benchDir = import.meta.dirname;
export const repositoryRoot = resolve(benchDir, '..', '..');

export interface BenchChild<Ready> {
  readonly ready: Ready;
  readonly process: ChildProcess;
  readonly output: () => string;
  stop(): Promise<void>;
}

/**
 * Starts `node [nodeFlags] --import tsx <file>` and waits for its first stdout line, a JSON
 * object the child prints once it is ready (a port, or its results). Bounded by `timeoutMs`.
 */
export async function startChild<Ready>(
  file: string,
  options: {
    env?: Record<string, string>;
    nodeFlags?: string[];
    timeoutMs?: number;
    forwardStderr?: boolean;
    /** Run under `taskset -c <cpuList>` (a server under load: pinning.ts); taskset execs, so the pid is node's. */
    cpuList?: string;
    /** Written to the child's stdin, which is then closed: what must not go through the environment (tokens). */
    stdin?: string;
  } = {},
): Promise<BenchChild<Ready>> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  delete env.NODE_OPTIONS;
  const nodeCommand = [process.execPath, ...(options.nodeFlags ?? []), '--import', 'tsx', resolve(benchDir, file)];
  const command = options.cpuList === undefined ? nodeCommand : ['taskset', '-c', options.cpuList, ...nodeCommand];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: repositoryRoot,
    env,
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  const forget = onCleanup(() => child.kill('SIGKILL'));
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  void exited.then(forget);
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    // Keep the tail only: a chatty child must not grow the bench's heap.
    stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
    if (options.forwardStderr) process.stderr.write(chunk);
  });
  const ready = await new Promise<Ready>((resolveReady, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} was not ready within ${options.timeoutMs ?? 60_000} ms\n${stderr}`));
    }, options.timeoutMs ?? 60_000);
    const onData = (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      // Libraries may print warnings to stdout: the ready line is the first one that is a JSON object.
      const line = stdout.split('\n').slice(0, -1).find((l) => l.startsWith('{'));
      if (line === undefined) {
        stdout = stdout.slice(-100_000);
        return;
      }
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      try {
        resolveReady(JSON.parse(line) as Ready);
      } catch (error) {
        reject(new Error(`${file} printed a line that is not JSON: ${line.slice(0, 500)}`, { cause: error }));
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited (${code ?? signal}) before it was ready\n${stderr}`));
    });
  });
  child.stdout?.resume();
  return {
    ready,
    process: child,
    output: () => stderr,
    async stop() {
      await stopGracefully(child, exited);
      forget();
    },
  };
}

/** SIGTERM, then SIGKILL if it has not exited 5 s later; resolves once it has exited (`exited`). */
export async function stopGracefully(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killer);
}

/** Prints a progress line to stderr, so stdout stays the report. */
export function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
