import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, statSync } from 'node:fs';

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
