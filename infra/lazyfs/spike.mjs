// Does SQLite in WAL mode behave on LazyFS, and does LazyFS really cut the power? Run as
//
//   node infra/lazyfs/spike.mjs "$(infra/lazyfs/build.sh)" [--runs 24]
//
// (as root, or with /dev/fuse usable and user_allow_other in /etc/fuse.conf). Everything happens
// in a scratch folder under the temp folder, removed at the end. What it shows:
//
//   A. WAL works on the mount: journal_mode=WAL sticks, a second connection and a second process
//      (the sqlite3 CLI, when installed) see each other's commits through the `-shm` shared memory
//      map, and two processes writing at once end with every acknowledged row and a sound file.
//   B. synchronous=FULL survives power cuts: a child commits rows one transaction at a time and
//      prints each number after commit returns; it is SIGKILLed at varied points (after k
//      acknowledgements, or after a random delay), LazyFS's cache is cleared, the mount is remounted
//      and every acknowledged row must be there, rows must form an unbroken sequence, every row of
//      earlier runs must still be there, and PRAGMA integrity_check must say ok. Before each cut,
//      LazyFS's unsynced-data report says which files the cut drops data of (the WAL's frames of
//      the commit in flight, the database's pages of a checkpoint in flight, always the -shm).
//   C. The harness bites: the same power cut loses acknowledged data that was not fsynced: a plain
//      file written without fsync, SQLite with synchronous=OFF, and with synchronous=NORMAL (which
//      fsyncs the WAL only at checkpoints). If nothing were lost here, B would prove nothing.
//   D. Numbers: time to mount, commits/s with synchronous=FULL on LazyFS and on a plain folder.
//
// It exits non-zero if any check fails. Plain JavaScript on purpose (no build, no tsx): its small
// mount helper mirrors lazyfs.ts, whose mountLazyFs is what tests use.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const self = fileURLToPath(import.meta.url);
const delay = (ms) => new Promise((done) => setTimeout(done, ms));

// ---------------------------------------------------------------------------------------------
// The child: `node spike.mjs --writer <db> <synchronous> <run> <count> <payload bytes>` commits
// rows (run, 1..count), one transaction each, printing "b<n>" before and "<n>" after each commit
// (stdout written synchronously, so a printed number was committed).
if (process.argv[2] === '--writer') {
  const [file, synchronous, run, count, payload] = process.argv.slice(3);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.exec('CREATE TABLE IF NOT EXISTS rows (run INTEGER NOT NULL, seq INTEGER NOT NULL, payload BLOB NOT NULL, PRIMARY KEY (run, seq))');
  const insert = db.prepare('INSERT INTO rows (run, seq, payload) VALUES (?, ?, ?)');
  for (let seq = 1; seq <= Number(count); seq++) {
    // Between 100 bytes and the payload size, so transactions span one WAL frame or several.
    const bytes = randomBytes(100 + Math.floor(Math.random() * Math.max(1, Number(payload) - 100)));
    writeSync(1, `b${seq}\n`);
    insert.run(Number(run), seq, bytes);
    writeSync(1, `${seq}\n`);
  }
  db.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// The mount helper (lazyfs.ts's mountLazyFs, in short).
function fuseMounted(point) {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((line) => {
      const [, mountPoint, type] = line.split(' ');
      return mountPoint === point && type?.startsWith('fuse');
    });
}

async function mountLazyFs({ binary, mountPoint, rootDir, workDir, cacheMiB = 128 }) {
  for (const dir of [mountPoint, rootDir, workDir]) mkdirSync(dir, { recursive: true });
  const faults = join(workDir, 'faults.fifo');
  const completed = join(workDir, 'faults-completed.fifo');
  const config = join(workDir, 'lazyfs.toml');
  const log = join(workDir, 'lazyfs.log');
  writeFileSync(
    config,
    `[faults]\nfifo_path=${JSON.stringify(faults)}\nfifo_path_completed=${JSON.stringify(completed)}\n` +
      `[cache]\napply_eviction=false\n[cache.simple]\ncustom_size="${cacheMiB}mb"\nblocks_per_page=1\n` +
      `[filesystem]\nlog_all_operations=false\nlogfile=""\n`,
  );
  for (const fifo of [faults, completed]) {
    rmSync(fifo, { force: true });
    if (spawnSync('mkfifo', ['-m', '600', fifo]).status !== 0) throw new Error(`mkfifo ${fifo}`);
  }
  const completedFd = openSync(completed, constants.O_RDWR | constants.O_NONBLOCK);
  const reader = new Socket({ fd: completedFd, readable: true, writable: false });
  reader.setEncoding('utf8');
  let done = '';
  reader.on('data', (chunk) => (done += chunk));
  reader.unref();
  const logFd = openSync(log, 'a');
  const args = [mountPoint, '--config-path', config, '-o', 'allow_other', '-o', 'modules=subdir', '-o', `subdir=${rootDir}`, '-f'];
  const child = spawn('sh', ['-c', 'ulimit -c 0; exec "$0" "$@"', binary, ...args], { stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  let exited;
  const exit = new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit((exited = signal ?? code))));
  const started = performance.now();
  while (!(fuseMounted(mountPoint) && readFileSync(log, 'utf8').includes('waiting for fault commands'))) {
    if (exited !== undefined) throw new Error(`lazyfs exited (${exited}):\n${readFileSync(log, 'utf8')}`);
    if (performance.now() - started > 15_000) throw new Error(`lazyfs did not mount:\n${readFileSync(log, 'utf8')}`);
    await delay(5);
  }
  const mountMs = performance.now() - started;
  return {
    mountMs,
    log,
    async clearCache() {
      const before = done.split('\n').filter((line) => line === 'finished::clear-cache').length;
      const fd = openSync(faults, constants.O_WRONLY | constants.O_NONBLOCK);
      writeSync(fd, 'lazyfs::clear-cache\n');
      closeSync(fd);
      const until = performance.now() + 30_000;
      while (done.split('\n').filter((line) => line === 'finished::clear-cache').length <= before) {
        if (performance.now() > until) throw new Error('clear-cache not acknowledged');
        await delay(2);
      }
    },
    /** `lazyfs::unsynced-data-report`: what LazyFS holds that was not fsynced (it answers in its log only). */
    async unsyncedReport() {
      const from = readFileSync(log, 'utf8').length;
      const fd = openSync(faults, constants.O_WRONLY | constants.O_NONBLOCK);
      writeSync(fd, 'lazyfs::unsynced-data-report\n');
      closeSync(fd);
      const until = performance.now() + 30_000;
      for (;;) {
        const text = readFileSync(log, 'utf8').slice(from);
        const total = /report: total number of bytes un-fsynced: (\d+) bytes/.exec(text);
        if (total || text.includes('report: all data blocks are synced!')) {
          const files = [...text.matchAll(/=> file: '([^']*)'/g)].map((match) => match[1].slice(rootDir.length + 1));
          return { bytes: total ? Number(total[1]) : 0, files: [...new Set(files)].sort() };
        }
        if (performance.now() > until) throw new Error('no unsynced-data report');
        await delay(2);
      }
    },
    async unmount() {
      if (exited === undefined) {
        if (spawnSync('fusermount3', ['-u', mountPoint]).status !== 0) spawnSync('umount', ['-l', mountPoint]);
        const forced = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exit;
        clearTimeout(forced);
      }
      if (fuseMounted(mountPoint)) spawnSync('fusermount3', ['-uz', mountPoint]);
      reader.destroy();
      return exited;
    },
  };
}

/** lazyfs.ts's pidsUsing: processes with a file of the mount open or mapped. */
function pidsUsing(mountPoint) {
  const inside = (target) => target === mountPoint || target.startsWith(mountPoint + sep);
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .filter((entry) => {
      try {
        const fds = readdirSync(`/proc/${entry}/fd`).map((fd) => `/proc/${entry}/fd/${fd}`);
        return (
          fds.some((link) => {
            try {
              return inside(readlinkSync(link));
            } catch {
              return false;
            }
          }) || readFileSync(`/proc/${entry}/maps`, 'utf8').includes(mountPoint + sep)
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

// ---------------------------------------------------------------------------------------------
const args = process.argv.slice(2);
const binary = args.find((arg) => !arg.startsWith('--') && !/^\d+$/.test(arg));
const runsIndex = args.indexOf('--runs');
const runs = runsIndex >= 0 ? Number(args[runsIndex + 1]) : 24;
if (!binary || !existsSync(binary)) {
  console.error('usage: node infra/lazyfs/spike.mjs <lazyfs binary> [--runs N]   (the binary: infra/lazyfs/build.sh prints it)');
  process.exit(2);
}
// No '-' before the random part: LazyFS refuses a --config-path holding "-o" in any case (lazyfs.ts says more).
const scratch = mkdtempSync(join(tmpdir(), 'lazyfs_spike_'));
const mountPoint = join(scratch, 'mnt');
const rootDir = join(scratch, 'root');
const workDir = join(scratch, 'work');
const failures = [];
const check = (ok, what) => {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};
const mountTimes = [];
let mount;
async function remount() {
  mount = await mountLazyFs({ binary, mountPoint, rootDir, workDir });
  mountTimes.push(mount.mountMs);
}
const sizes = (base) => Object.fromEntries(['', '-wal', '-shm'].map((suffix) => [suffix || 'db', existsSync(base + suffix) ? statSync(base + suffix).size : null]));

/** Runs the writer child; kills it with SIGKILL when `killWhen` says so; resolves with what it printed. */
function writer(file, synchronous, run, count, payload, killWhen) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [self, '--writer', file, synchronous, String(run), String(count), String(payload)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let acked = 0;
    let begun = 0;
    let rest = '';
    let killed = false;
    const kill = () => {
      if (!killed) {
        killed = true;
        child.kill('SIGKILL');
      }
    };
    let timer;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      // Counted from the first commit begun, not from the spawn: Node's start-up time varies.
      if (killWhen.afterMs !== undefined && timer === undefined) timer = setTimeout(kill, killWhen.afterMs);
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        if (line.startsWith('b')) begun = Number(line.slice(1));
        else acked = Number(line);
      }
      if (killWhen.afterAcks !== undefined && acked >= killWhen.afterAcks) kill();
    });
    child.once('error', reject);
    // 'close': stdout drained, so every number the child printed before it died is counted.
    child.once('close', (code, signal) => resolveRun({ acked, begun, code, signal, pid: child.pid }));
  });
}

function verify(file) {
  const db = new Database(file);
  try {
    const integrity = db.pragma('integrity_check', { simple: true });
    const journal = db.pragma('journal_mode', { simple: true });
    const perRun = new Map(db.prepare('SELECT run, count(*) AS n, max(seq) AS top FROM rows GROUP BY run').all().map((row) => [row.run, row]));
    return { integrity, journal, perRun };
  } finally {
    db.close();
  }
}

async function powerCut() {
  // Step 1 is the caller's (the child is dead by now); nothing may still use the mount.
  const users = pidsUsing(mountPoint);
  if (users.length) throw new Error(`processes still use the mount: ${users}`);
  const unsynced = await mount.unsyncedReport();
  await mount.clearCache();
  await mount.unmount();
  await remount();
  return unsynced;
}

try {
  await remount();
  console.log(`scratch ${scratch}; lazyfs ${binary}; SQLite ${new Database(':memory:').prepare('SELECT sqlite_version() AS v').get().v} (better-sqlite3)`);

  // ----------------------------------------------------------------------------------------- A
  console.log('\nA. WAL on the mount');
  {
    const file = join(mountPoint, 'a.db');
    const one = new Database(file);
    check(one.pragma('journal_mode = WAL', { simple: true }) === 'wal', 'journal_mode=WAL is accepted');
    one.pragma('synchronous = FULL');
    one.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT)');
    const insert = one.prepare('INSERT INTO t (note) VALUES (?)');
    for (let i = 0; i < 100; i++) insert.run(`row ${i}`);
    const two = new Database(file);
    check(two.prepare('SELECT count(*) AS n FROM t').get().n === 100, 'a second connection reads 100 rows committed one transaction each');
    check(existsSync(`${file}-wal`) && existsSync(`${file}-shm`), `-wal and -shm exist (${JSON.stringify(sizes(file))})`);
    const maps = readFileSync('/proc/self/maps', 'utf8').split('\n').filter((line) => line.endsWith(`${file}-shm`));
    check(maps.length > 0 && maps.every((line) => line.split(/\s+/)[1].includes('s')), `-shm is mapped shared (${maps.length} mapping(s), ${maps[0]?.split(/\s+/)[1]})`);
    const cli = spawnSync('sqlite3', [file, 'PRAGMA journal_mode;', 'SELECT count(*) FROM t;', "INSERT INTO t (note) VALUES ('from the CLI');", 'SELECT count(*) FROM t;'], { encoding: 'utf8' });
    if (cli.error) console.log('  (no sqlite3 CLI: second-process check skipped)');
    else check(cli.stdout.trim().split('\n').join(' ') === 'wal 100 101', `the sqlite3 CLI (another process) reads and writes: "${cli.stdout.trim().split('\n').join(' ')}"`);
    check(one.prepare('SELECT count(*) AS n FROM t').get().n === 101 && two.prepare("SELECT note FROM t WHERE id = 101").get()?.note === 'from the CLI', "both connections see the other process's commit");
    // Two writer processes at once, each acknowledging its commits.
    one.exec('CREATE TABLE IF NOT EXISTS rows (run INTEGER NOT NULL, seq INTEGER NOT NULL, payload BLOB NOT NULL, PRIMARY KEY (run, seq))');
    one.pragma('busy_timeout = 5000');
    const concurrent = await Promise.all([writer(file, 'FULL', 1, 300, 2000, {}), writer(file, 'FULL', 2, 300, 2000, {})]);
    const counts = one.prepare('SELECT run, count(*) AS n FROM rows GROUP BY run ORDER BY run').all();
    check(
      concurrent.every((r) => r.code === 0 && r.acked === 300) && counts.map((c) => c.n).join() === '300,300',
      `two processes writing at once: acked ${concurrent.map((r) => r.acked)} (exit ${concurrent.map((r) => r.code)}), found ${counts.map((c) => c.n)}`,
    );
    check(one.pragma('integrity_check', { simple: true }) === 'ok', 'integrity_check ok');
    one.close();
    two.close();
  }

  // ----------------------------------------------------------------------------------------- B
  console.log(`\nB. ${runs} power cuts with synchronous=FULL`);
  const file = join(mountPoint, 'b.db');
  {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE rows (run INTEGER NOT NULL, seq INTEGER NOT NULL, payload BLOB NOT NULL, PRIMARY KEY (run, seq))');
    db.close();
  }
  const expected = new Map();
  const table = [];
  for (let run = 1; run <= runs; run++) {
    // Even runs: killed as the k-th acknowledgement arrives (k spread over 1..~2000, so a kill
    // lands before, between and after checkpoints, which happen every ~1000 WAL pages); odd
    // runs: a random 0..600 ms after the first commit began, wherever the child is then.
    const killWhen = run % 2 === 0 ? { afterAcks: Math.max(1, Math.round(2 ** (Math.random() * 11))) } : { afterMs: Math.floor(Math.random() * 600) };
    const result = await writer(file, 'FULL', run, 1_000_000, 4000, killWhen);
    const inFlight = result.begun > result.acked;
    const unsynced = await powerCut();
    // What the "disk" holds after the cut, before SQLite recovers (and, on close, removes the WAL).
    const afterCut = JSON.stringify(sizes(join(rootDir, 'b.db')));
    const { integrity, journal, perRun } = verify(file);
    const found = perRun.get(run) ?? { n: 0, top: 0 };
    const earlierIntact = [...expected].every(([r, n]) => (perRun.get(r)?.n ?? 0) === n);
    const ok = integrity === 'ok' && journal === 'wal' && found.n >= result.acked && found.n === (found.top ?? 0) && earlierIntact && result.signal === 'SIGKILL';
    expected.set(run, found.n);
    table.push({ run, kill: killWhen.afterAcks !== undefined ? `after ack ${killWhen.afterAcks}` : `${killWhen.afterMs} ms into the stream`, acked: result.acked, begun: result.begun, found: found.n, inFlight: inFlight ? (found.n > result.acked ? 'kept' : 'lost') : '-', integrity, earlierIntact, afterCut, unsynced });
    check(ok, `run ${run}: kill ${table.at(-1).kill}: acked ${result.acked}, found ${found.n}${inFlight ? ` (commit ${result.begun} in flight: ${found.n > result.acked ? 'kept' : 'lost'})` : ''}, integrity ${integrity}, earlier runs intact ${earlierIntact}; dropped ${unsynced.bytes} unsynced bytes of ${unsynced.files.join(', ') || 'nothing'}; root folder after the cut ${afterCut}`);
  }
  const totalAcked = table.reduce((sum, row) => sum + row.acked, 0);
  const totalFound = table.reduce((sum, row) => sum + row.found, 0);
  const droppedIn = (name) => table.filter((row) => row.unsynced.files.includes(name)).length;
  console.log(`  kill points: ${table.filter((row) => row.acked === 0).length} runs killed before their first commit returned, acked min ${Math.min(...table.map((row) => row.acked))}, max ${Math.max(...table.map((row) => row.acked))}`);
  console.log(`  the cut dropped unsynced data of b.db-wal in ${droppedIn('b.db-wal')} runs, of b.db in ${droppedIn('b.db')}, of b.db-shm in ${droppedIn('b.db-shm')}`);
  console.log(`  total: acked ${totalAcked}, found ${totalFound}; in-flight commits kept ${table.filter((r) => r.inFlight === 'kept').length}, lost ${table.filter((r) => r.inFlight === 'lost').length}`);

  // ----------------------------------------------------------------------------------------- C
  console.log('\nC. the same power cut loses what was not fsynced');
  {
    const chunk = randomBytes(4096);
    const plain = openSync(join(mountPoint, 'plain-nofsync.bin'), 'w');
    for (let i = 0; i < 256; i++) writeSync(plain, chunk);
    closeSync(plain);
    const synced = openSync(join(mountPoint, 'plain-fsync.bin'), 'w');
    for (let i = 0; i < 256; i++) writeSync(synced, chunk);
    fsyncSync(synced);
    closeSync(synced);
    const beforeSize = statSync(join(mountPoint, 'plain-nofsync.bin')).size;
    const rootBefore = statSync(join(rootDir, 'plain-nofsync.bin')).size;
    const off = await writer(join(mountPoint, 'off.db'), 'OFF', 1, 1_000_000, 4000, { afterAcks: 500 });
    const normal = await writer(join(mountPoint, 'normal.db'), 'NORMAL', 1, 1_000_000, 4000, { afterAcks: 1500 });
    await powerCut();
    const afterSize = statSync(join(mountPoint, 'plain-nofsync.bin')).size;
    check(beforeSize === 1 << 20 && afterSize === 0, `plain file, 1 MiB written without fsync: ${beforeSize} bytes before the cut (root folder had ${rootBefore}), ${afterSize} after`);
    check(statSync(join(mountPoint, 'plain-fsync.bin')).size === 1 << 20, 'plain file, 1 MiB written and fsynced: all there');
    const countOf = (name) => {
      try {
        const db = new Database(join(mountPoint, name));
        try {
          const n = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'rows'").get().n ? db.prepare('SELECT count(*) AS n FROM rows').get().n : 'no table';
          return `${n}, integrity ${db.pragma('integrity_check', { simple: true })}`;
        } finally {
          db.close();
        }
      } catch (error) {
        return `unreadable: ${error.message}`;
      }
    };
    const offFound = countOf('off.db');
    const normalFound = countOf('normal.db');
    check(!offFound.startsWith(`${off.acked},`), `synchronous=OFF: acked ${off.acked}, found ${offFound}`);
    check(!normalFound.startsWith(`${normal.acked},`), `synchronous=NORMAL: acked ${normal.acked}, found ${normalFound} (what the last checkpoint had fsynced)`);
  }

  // ----------------------------------------------------------------------------------------- D
  console.log('\nD. numbers');
  const sorted = [...mountTimes].sort((x, y) => x - y);
  console.log(`  mount (spawn to live, 128 MiB cache): ${mountTimes.length} mounts, median ${sorted[sorted.length >> 1].toFixed(0)} ms, min ${sorted[0].toFixed(0)} ms, max ${sorted.at(-1).toFixed(0)} ms`);
  const plainDir = join(scratch, 'plain');
  mkdirSync(plainDir);
  for (const synchronous of ['FULL', 'NORMAL']) {
    for (const [where, dir] of [
      ['LazyFS', mountPoint],
      ['plain folder', plainDir],
    ]) {
      const db = new Database(join(dir, `rate-${synchronous}.db`));
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${synchronous}`);
      db.exec('CREATE TABLE r (id INTEGER PRIMARY KEY, payload BLOB)');
      const insert = db.prepare('INSERT INTO r (payload) VALUES (?)');
      const payload = randomBytes(200);
      const count = 2000;
      const started = performance.now();
      for (let i = 0; i < count; i++) insert.run(payload);
      const seconds = (performance.now() - started) / 1000;
      db.close();
      console.log(`  synchronous=${synchronous} on ${where}: ${count} commits (200-byte rows) in ${seconds.toFixed(2)} s = ${Math.round(count / seconds)} commits/s`);
    }
  }
  const start = performance.now();
  await mount.clearCache();
  console.log(`  clear-cache round trip (cache nearly empty): ${(performance.now() - start).toFixed(1)} ms`);
} catch (error) {
  failures.push(String(error?.stack ?? error));
  console.error(error);
} finally {
  await mount?.unmount();
  if (!fuseMounted(mountPoint)) rmSync(scratch, { recursive: true, force: true });
}
console.log(failures.length ? `\n${failures.length} check(s) failed` : '\nall checks passed');
process.exit(failures.length ? 1 : 0);
