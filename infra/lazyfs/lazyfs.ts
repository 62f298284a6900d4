/**
 * LazyFS (https://github.com/dsrhaslab/lazyfs), a FUSE file system that is not Tessera's code: it
 * passes everything through to a root folder, except that file data written and not yet fsynced
 * stays in its own page cache, which `lazyfs::clear-cache` throws away: what a power cut does to a
 * disk's volatile cache. Built by build.sh beside this file (vendored source, pinned in COMMIT).
 *
 * A power cut, as a test stages it:
 *
 *   1. SIGKILL every process that uses the mount (`pidsUsing(mount.mountPoint)` finds open files,
 *      memory maps such as SQLite's `-shm`, and working folders) and wait until each has exited:
 *      nothing may run on, or commit, after the "power" is off.
 *   2. `await mount.clearCache()`: LazyFS drops every write that was not fsynced.
 *   3. `await mount.unmount()`: the kernel's page cache of the mount goes with it, so nothing read
 *      after the cut comes from memory. LazyFS never writes its cache back on unmount, so a dirty
 *      page the kernel still wrote back after step 2 (a dead process's `-shm` map) is lost too.
 *   4. `mount = await mountLazyFs(mount.options)`: the next boot sees what the root folder holds,
 *      which is what was fsynced.
 *   5. Restart the processes on the mount and check what they recover.
 *
 * What is volatile (infra/lazyfs/README.md has the detail): file data and file sizes (writes,
 * truncates) until that file is fsynced. Creating, renaming, linking and deleting files and
 * folders reach the root folder at once, so they survive a cut without the folder's fsync (which
 * LazyFS accepts as a no-op): missing directory fsyncs go unnoticed. A write that finds the cache
 * full (`cacheMiB`) goes straight to the root folder and survives. Unmounting without clear-cache
 * drops unsynced data just the same.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statfsSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { Socket } from 'node:net';

/** The upstream commit COMMIT pins (40 hex digits). */
export function lazyFsCommit(): string {
  const commit = readFileSync(join(import.meta.dirname, 'COMMIT'), 'utf8').trim();
  if (!/^[0-9a-f]{40}$/.test(commit)) throw new Error(`infra/lazyfs/COMMIT holds no commit: ${commit}`);
  return commit;
}

/** TESSERA_LAZYFS, or where build.sh leaves the binary; undefined when neither exists. */
export function lazyFsBinary(): string | undefined {
  const binary = process.env.TESSERA_LAZYFS || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tessera', `lazyfs-${lazyFsCommit().slice(0, 7)}`, 'lazyfs');
  return existsSync(binary) ? binary : undefined;
}

export interface LazyFsOptions {
  /** The lazyfs binary build.sh printed. */
  readonly binary: string;
  /** An empty folder, created if missing, where the file system appears. */
  readonly mountPoint: string;
  /** The folder LazyFS keeps the files in (what survives a power cut); created if missing. */
  readonly rootDir: string;
  /**
   * LazyFS's cache (allocated up front): 128 MiB unless said. Unsynced data beyond it is written
   * through to rootDir, and so survives a power cut: size it above what a test leaves unsynced.
   */
  readonly cacheMiB?: number;
  /** Where the config, the FIFOs and the log go: a new temp folder, removed on unmount, unless said. */
  readonly workDir?: string;
  /** FUSE's allow_other, as upstream's mount script passes it: other users may use the mount. Root only unless /etc/fuse.conf has user_allow_other; on for root unless said. */
  readonly allowOther?: boolean;
  /** How long the mount may take to come up: 15 s unless said. */
  readonly timeoutMs?: number;
}

export interface LazyFsMount {
  /** What mounted it: `mountLazyFs(mount.options)` mounts the same folders again. */
  readonly options: LazyFsOptions;
  /** Absolute, symbolic links resolved. */
  readonly mountPoint: string;
  readonly rootDir: string;
  readonly pid: number;
  /** LazyFS's output: its config, every fault command and what it did. */
  readonly logFile: string;
  /** Drops every write not fsynced; resolves once LazyFS says it is done. */
  clearCache(): Promise<void>;
  /** Unmounts (lazily if the mount is still busy) and waits for LazyFS to exit, killing it if it lingers. */
  unmount(): Promise<void>;
}

const faultsFifoName = 'faults.fifo';
const completedFifoName = 'faults-completed.fifo';
const clearCacheCommand = 'lazyfs::clear-cache';
const clearCacheDone = 'finished::clear-cache';
/** The worker thread's first line once it reads the faults FIFO (vendor/lazyfs/src/main.cpp). */
const workerReady = '[lazyfs.faults.worker]: waiting for fault commands...';

const delay = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** The mount points /proc/mounts lists with a FUSE type ("fuse.lazyfs"), octal escapes undone. */
function fuseMounts(): Set<string> {
  const mounts = new Set<string>();
  for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
    const [, point, type] = line.split(' ');
    if (point !== undefined && type?.startsWith('fuse')) mounts.add(point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))));
  }
  return mounts;
}

function deadMount(path: string): boolean {
  try {
    statSync(path);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOTCONN';
  }
}

function tail(file: string, bytes = 4000): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.slice(Math.max(0, text.length - bytes));
  } catch {
    return '';
  }
}

/** TOML's basic string: JSON's escapes are a subset of TOML's for the characters a path holds. */
const tomlString = (value: string) => JSON.stringify(value);

/**
 * The processes that hold a file of the mount open, map one (SQLite's `-shm`) or work in it:
 * what step 1 of a power cut kills. This process is left out.
 */
export function pidsUsing(mountPoint: string): number[] {
  const root = resolve(mountPoint);
  const inside = (target: string) => target === root || target.startsWith(root + sep);
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const links = [`/proc/${entry}/cwd`, ...readdirSync(`/proc/${entry}/fd`).map((fd) => `/proc/${entry}/fd/${fd}`)];
      const uses =
        links.some((link) => {
          try {
            return inside(readlinkSync(link));
          } catch {
            return false;
          }
        }) || readFileSync(`/proc/${entry}/maps`, 'utf8').split('\n').some((line) => inside(line.replace(/^(\S+\s+){5}/, '').replace(/ \(deleted\)$/, '')));
      if (uses) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

/**
 * Mounts LazyFS as upstream's scripts/mount-lazyfs.sh does, in the foreground (`-f`), its output
 * in `logFile`; resolves once the mount is live and LazyFS reads fault commands.
 */
export async function mountLazyFs(options: LazyFsOptions): Promise<LazyFsMount> {
  const { binary, cacheMiB = 128, timeoutMs = 15_000 } = options;
  if (!Number.isInteger(cacheMiB) || cacheMiB < 1) throw new Error(`cacheMiB must be a whole number of MiB, at least 1: ${cacheMiB}`);
  const given = resolve(options.mountPoint);
  if (fuseMounts().has(given)) {
    // A LazyFS that died (SIGKILL, or its test run did) leaves a dead mount: "not connected".
    if (!deadMount(given)) throw new Error(`${given} is already a FUSE mount: unmount it first (fusermount3 -u ${given})`);
    spawnSync('fusermount3', ['-uz', given]);
  }
  mkdirSync(given, { recursive: true });
  mkdirSync(options.rootDir, { recursive: true });
  const mountPoint = realpathSync(given);
  const rootDir = realpathSync(options.rootDir);
  if (fuseMounts().has(mountPoint)) throw new Error(`${mountPoint} is already a FUSE mount: unmount it first (fusermount3 -u ${mountPoint})`);
  const madeWorkDir = options.workDir === undefined;
  const workDir = resolve(options.workDir ?? mkdtempSync(join(tmpdir(), 'tessera-lazyfs-')));
  mkdirSync(workDir, { recursive: true });
  const faultsFifo = join(workDir, faultsFifoName);
  const completedFifo = join(workDir, completedFifoName);
  const configName = 'lazyfs.toml';
  const configFile = join(workDir, configName);
  const logFile = join(workDir, 'lazyfs.log');
  // Keys as vendor/libs/libpcache/src/config/config.cpp reads them. Pages of one 4 KiB block, as
  // upstream's default.toml has it; no eviction, so a full cache writes through instead of
  // writing back pages of its choice. logfile "": the log is LazyFS's stdout, which goes to logFile.
  writeFileSync(
    configFile,
    `[faults]
fifo_path=${tomlString(faultsFifo)}
fifo_path_completed=${tomlString(completedFifo)}
[cache]
apply_eviction=false
[cache.simple]
custom_size="${cacheMiB}mb"
blocks_per_page=1
[filesystem]
log_all_operations=false
logfile=""
`,
  );
  for (const fifo of [faultsFifo, completedFifo]) {
    rmSync(fifo, { force: true });
    const made = spawnSync('mkfifo', ['-m', '600', fifo], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`mkfifo ${fifo} failed: ${made.stderr || made.error?.message}`);
  }
  // LazyFS's worker opens the completed-faults FIFO for writing and blocks until a reader has it
  // open, reading no command until then: open it first. O_RDWR, so that it never reads as ended.
  const completedFd = openSync(completedFifo, constants.O_RDWR | constants.O_NONBLOCK);
  const completed = new Socket({ fd: completedFd, readable: true, writable: false });
  let completedText = '';
  const completedWaiters: (() => void)[] = [];
  completed.setEncoding('utf8');
  completed.on('data', (chunk: string) => {
    completedText += chunk;
    for (const wake of completedWaiters.splice(0)) wake();
  });
  completed.on('error', () => undefined);
  completed.unref();

  // The config by a name relative to LazyFS's working folder, never by its path: LazyFS takes a
  // --config-path that contains "-o" anywhere, in any case, for a missing one (strcasestr in
  // vendor/lazyfs/src/main.cpp), falls back to config/default.toml and aborts; a temp folder named
  // tessera-lazyfs-O4nl1f did that to one mount in about thirty.
  const args = [mountPoint, '--config-path', configName, ...((options.allowOther ?? process.getuid?.() === 0) ? ['-o', 'allow_other'] : []), '-o', 'modules=subdir', '-o', `subdir=${rootDir}`, '-f'];
  const logFd = openSync(logFile, 'a');
  // No core file: LazyFS aborts as it exits (its fault thread is still joinable), every time.
  const child: ChildProcess = spawn('sh', ['-c', 'ulimit -c 0; exec "$0" "$@"', resolve(binary), ...args], { cwd: workDir, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  let exitedWith: string | undefined;
  const exited = new Promise<void>((done) =>
    child.once('exit', (code, signal) => {
      exitedWith = signal ?? String(code);
      done();
    }),
  );
  // If this process dies with the mount up, take it down rather than leave a dead mount behind.
  const onExit = () => {
    spawnSync('fusermount3', ['-uz', mountPoint]);
    child.kill('SIGKILL');
  };
  process.once('exit', onExit);
  const pid = child.pid;
  const cleanUp = () => {
    process.removeListener('exit', onExit);
    completed.destroy();
    if (madeWorkDir) rmSync(workDir, { recursive: true, force: true });
  };
  const unmount = async () => {
    if (exitedWith === undefined) {
      // Busy (a process still has a file open): detach it now, FUSE lets go when the last user does.
      const clean = spawnSync('fusermount3', ['-u', mountPoint], { encoding: 'utf8' });
      if (clean.status !== 0 && fuseMounts().has(mountPoint)) {
        const lazy = spawnSync('umount', ['-l', mountPoint], { encoding: 'utf8' });
        if (lazy.status !== 0) spawnSync('fusermount3', ['-uz', mountPoint]);
      }
      const forced = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(forced);
    }
    // A SIGKILLed LazyFS leaves its mount behind ("Transport endpoint is not connected").
    if (fuseMounts().has(mountPoint) && deadMount(mountPoint)) spawnSync('fusermount3', ['-uz', mountPoint]);
    cleanUp();
  };

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exitedWith !== undefined) {
      const log = tail(logFile);
      if (fuseMounts().has(mountPoint)) spawnSync('fusermount3', ['-uz', mountPoint]);
      cleanUp();
      throw new Error(`lazyfs exited (${exitedWith}) before its mount was live; log ${logFile}:\n${log}`);
    }
    if (pid !== undefined && fuseMounts().has(mountPoint) && tail(logFile, 1 << 20).includes(workerReady)) break;
    if (Date.now() > deadline) {
      const log = tail(logFile);
      await unmount();
      throw new Error(`lazyfs did not mount ${mountPoint} within ${timeoutMs} ms; log ${logFile}:\n${log}`);
    }
    await delay(20);
  }

  // One command at a time: LazyFS reads the FIFO 100 bytes at a time and takes what one read gets
  // as one command, so two commands in the pipe at once would be read as one unknown command.
  let queue: Promise<void> = Promise.resolve();
  const clearCache = () => {
    const run = queue.then(async () => {
      if (exitedWith !== undefined) throw new Error(`lazyfs exited (${exitedWith}); log ${logFile}:\n${tail(logFile)}`);
      const seen = completedText.split('\n').filter((line) => line === clearCacheDone).length;
      // LazyFS holds the FIFO open for reading: a non-blocking open succeeds, and one write of
      // fewer than PIPE_BUF bytes arrives whole. The newline is the byte LazyFS drops.
      const fd = openSync(faultsFifo, constants.O_WRONLY | constants.O_NONBLOCK);
      try {
        writeSync(fd, `${clearCacheCommand}\n`);
      } finally {
        closeSync(fd);
      }
      const deadlineMs = Date.now() + 30_000;
      while (completedText.split('\n').filter((line) => line === clearCacheDone).length <= seen) {
        if (exitedWith !== undefined) throw new Error(`lazyfs exited (${exitedWith}) during clear-cache; log ${logFile}:\n${tail(logFile)}`);
        if (Date.now() > deadlineMs) throw new Error(`lazyfs did not clear its cache within 30 s; log ${logFile}:\n${tail(logFile)}`);
        await Promise.race([new Promise<void>((wake) => completedWaiters.push(wake)), delay(100)]);
      }
    });
    queue = run.catch(() => undefined);
    return run;
  };

  return { options, mountPoint, rootDir, pid: pid ?? -1, logFile, clearCache, unmount };
}

/** FUSE's magic number in statfs(2)'s f_type. */
const fuseSuperMagic = 0x65735546;

/** True when `path` is on a FUSE file system, e.g. to assert that a test's database is on the mount. */
export function onFuse(path: string): boolean {
  try {
    return statfsSync(path).type === fuseSuperMagic;
  } catch {
    return false;
  }
}
