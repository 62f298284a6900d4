import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real NGINX for tests of the configurations the docs hand to users. Found as `nginx` on PATH,
 * /usr/sbin/nginx, or TESSERA_NGINX (.ci/run takes the binary out of Debian's nginx package).
 */
export function findNginx(): string | undefined {
  for (const candidate of [process.env.TESSERA_NGINX, 'nginx', '/usr/sbin/nginx']) {
    if (candidate && spawnSync(candidate, ['-v'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  return undefined;
}

export interface RunningNginx {
  readonly output: () => string;
  stop(): Promise<void>;
}

/**
 * Runs `nginx -c <conf>` in the foreground with its pid and temporary files in a folder of its
 * own, so it needs nothing of the machine's /etc/nginx or /var/lib/nginx. `httpConfig` is the
 * inside of the `http {}` block; `listenPort` must be in it, and is waited for.
 */
export async function startNginx(binary: string, httpConfig: string, listenPort: number): Promise<RunningNginx> {
  const prefix = mkdtempSync(join(tmpdir(), 'tessera-nginx-'));
  for (const folder of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'logs']) mkdirSync(join(prefix, folder));
  const configFile = join(prefix, 'nginx.conf');
  writeFileSync(
    configFile,
    [
      'daemon off;',
      'master_process on;',
      'worker_processes 1;',
      // As root NGINX would run its worker as nobody, who cannot write the temp folders here.
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      `pid ${join(prefix, 'nginx.pid')};`,
      'error_log stderr warn;',
      'events { worker_connections 256; }',
      'http {',
      `  client_body_temp_path ${join(prefix, 'body')};`,
      `  proxy_temp_path ${join(prefix, 'proxy')};`,
      `  fastcgi_temp_path ${join(prefix, 'fastcgi')};`,
      `  uwsgi_temp_path ${join(prefix, 'uwsgi')};`,
      `  scgi_temp_path ${join(prefix, 'scgi')};`,
      // Otherwise the compiled-in /var/log/nginx/access.log, which need not exist.
      `  access_log ${join(prefix, 'logs', 'access.log')};`,
      httpConfig,
      '}',
      '',
    ].join('\n'),
  );
  // A file, not a pipe: Node's pipes are sockets, and NGINX cannot open /dev/stdout on a socket
  // (ENXIO), which the shipped configuration logs to.
  const outputFile = join(prefix, 'logs', 'output.log');
  const outputFd = openSync(outputFile, 'a', 0o600);
  const child: ChildProcess = spawn(binary, ['-p', prefix, '-c', configFile, '-e', 'stderr'], { stdio: ['ignore', outputFd, outputFd] });
  closeSync(outputFd);
  const output = () => readFileSync(outputFile, 'utf8');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      await exited;
      throw new Error(`nginx exited at start:\n${output()}`);
    }
    if (await listening(listenPort)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not listen on ${listenPort} within 10 s:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    output,
    async stop() {
      if (child.exitCode === null) {
        // QUIT: a graceful stop; the master waits for its worker.
        child.kill('SIGQUIT');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
        await exited;
      }
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
