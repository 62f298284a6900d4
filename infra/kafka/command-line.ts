import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** True when `command` is on PATH. */
export function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Runs `main` with the command line when the module at `moduleUrl` is the one node was started
 * with (`npx tsx infra/…/x.ts …`), and not when it is imported. A failure prints its message
 * and exits 1.
 */
export function runAsCommand(moduleUrl: string, main: (argv: string[]) => Promise<void>): void {
  if (!process.argv[1] || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}

/** A foreground `run`: Ctrl-C or SIGTERM destroys what was started, then the command exits. */
export function destroyOnSignal(started: { destroy(): Promise<void> }): void {
  const shutdown = () => {
    started.destroy().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
