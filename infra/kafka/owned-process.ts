import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readLogSince, tail } from './log-file.js';

/** Kills `childPid` if its owner dies without stopping it (a crashed or killed test run). */
export function watchOwner(ownerPid: number, childPid: number): void {
  if (ownerPid <= 0) return;
  const watchdog = spawn(
    'sh',
    ['-c', `while kill -0 ${ownerPid} 2>/dev/null && kill -0 ${childPid} 2>/dev/null; do sleep 1; done; kill -9 ${childPid} 2>/dev/null; exit 0`],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();
}

/** How a start waits for its process to be ready. */
export interface Readiness {
  /** What the errors call the process: "Kafka broker", "MirrorMaker 2". */
  readonly what: string;
  readonly logFile: string;
  readonly timeoutMs: number;
  /** The state waited for, in the timeout's message: "ready" unless said. */
  readonly state?: string;
  readonly pollMs?: number;
  /**
   * Asked after each pause, with what the log gained since the spawn: true when ready, false
   * while not yet, 'gave-up' when this start cannot succeed and the caller decides what next.
   */
  readonly check: (logSinceSpawn: () => string) => boolean | 'gave-up' | Promise<boolean | 'gave-up'>;
}

/**
 * One long-running helper process (a Kafka broker, MirrorMaker 2, Toxiproxy) owned by this one:
 * output appended to a log file, killed with this process or its owner, stopped with a grace
 * period. Each caller keeps its own readiness check; this is only the lifecycle they share.
 */
export class OwnedProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private code: number | undefined;
  private readonly onProcessExit = () => this.child?.kill('SIGKILL');

  /** ownerPid 0: none — the process is a daemon in its own group, so the shell's Ctrl-C does not reach it. */
  constructor(private readonly ownerPid: number) {}

  get running(): boolean {
    return this.child !== undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last spawn's exit code (-1 for a signal), or undefined while it runs. */
  get exitCode(): number | undefined {
    return this.code;
  }

  /** Starts the command; returns the log's size before it, where a readiness scan should begin. */
  spawn(command: string, args: readonly string[], logFile: string): number {
    const logOffset = existsSync(logFile) ? statSync(logFile).size : 0;
    const logFd = openSync(logFile, 'a');
    const spawned = spawn(command, args, { stdio: ['ignore', logFd, logFd], detached: this.ownerPid <= 0 });
    closeSync(logFd);
    if (this.ownerPid <= 0) spawned.unref();
    this.child = spawned;
    this.code = undefined;
    this.exited = new Promise<void>((resolveExit) => {
      spawned.once('exit', (code, signal) => {
        this.code = code ?? (signal ? -1 : 0);
        if (this.child === spawned) this.child = undefined;
        resolveExit();
      });
    });
    process.once('exit', this.onProcessExit);
    if (spawned.pid !== undefined) watchOwner(this.ownerPid, spawned.pid);
    return logOffset;
  }

  /**
   * Spawns the command and waits until `readiness.check` says it is ready (true) or gave up
   * (false, the process still running). A process that exits first, or one not ready by the
   * deadline (it is killed), fails the start with the log's tail.
   */
  async launch(command: string, args: readonly string[], readiness: Readiness): Promise<boolean> {
    const { what, logFile, timeoutMs } = readiness;
    const logOffset = this.spawn(command, args, logFile);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.code !== undefined) throw new Error(`${what} exited (${this.code}) before it was ready; log ${logFile}:\n${tail(logFile)}`);
      const answer = await readiness.check(() => readLogSince(logFile, logOffset));
      if (answer !== false) return answer === true;
      if (Date.now() > deadline) {
        await this.stop('SIGKILL');
        throw new Error(`${what} not ${readiness.state ?? 'ready'} within ${timeoutMs} ms; log ${logFile}:\n${tail(logFile)}`);
      }
      await new Promise((r) => setTimeout(r, readiness.pollMs ?? 100));
    }
  }

  /** SIGTERM is a clean stop, SIGKILL a crash; a process that ignores SIGTERM is killed after `forceAfterMs`. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM', forceAfterMs = 20_000): Promise<void> {
    const running = this.child;
    if (!running) return;
    running.kill(signal);
    const forced = setTimeout(() => running.kill('SIGKILL'), forceAfterMs);
    await this.exited;
    clearTimeout(forced);
    process.removeListener('exit', this.onProcessExit);
  }
}

/** Where a helper keeps its files: the folder given, or a new temp folder that remove() deletes. */
export interface WorkFolder {
  readonly dir: string;
  remove(): void;
}

export function workFolder(given: string | undefined, tempPrefix: string): WorkFolder {
  const dir = resolve(given ?? mkdtempSync(join(tmpdir(), tempPrefix)));
  mkdirSync(dir, { recursive: true });
  return {
    dir,
    remove: () => {
      if (given === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The part of a helper's handle that every helper shares. */
export interface ProcessHandle {
  readonly workDir: string;
  readonly pid: () => number | undefined;
  readonly running: () => boolean;
  /** Stops and removes the work folder if it was made for this helper. */
  destroy(): Promise<void>;
}

export function processHandle(owned: OwnedProcess, folder: WorkFolder, stop: () => Promise<void>): ProcessHandle {
  return {
    workDir: folder.dir,
    pid: () => owned.pid,
    running: () => owned.running,
    destroy: async () => {
      await stop();
      folder.remove();
    },
  };
}
