import { chmodSync, closeSync, openSync, statSync } from 'node:fs';
import { errorCode } from '@tessera/contracts';

/**
 * Makes a SQLite file owner-only (0600) without ever opening a descriptor of one that exists.
 *
 * POSIX advisory locks belong to the process, and closing any descriptor of a file drops every
 * lock the process holds on it, whoever took them. SQLite's own connections share descriptors
 * through its VFS and never do this to each other, but a plain open and close from anywhere else
 * in the process (another thread's store opening the same log included) leaves every connection
 * lockless. Another program's connection (an operator's `sqlite3`, a backup, a Python reader) then
 * takes itself for the last user when it closes: it checkpoints and deletes the live `-wal`, and
 * every commit after that goes to a deleted file.
 *
 * So a missing file is made here with its mode ('wx': the open fails rather than touch a file that
 * appeared meanwhile) before any connection to it can exist, and an existing one is only changed by
 * path. The `-wal` and `-shm` SQLite makes take the database file's mode. `process.umask` cannot
 * help instead: worker threads may not call it.
 */
export function ownerOnlySqliteFile(file: string): void {
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
  }
  tighten(file);
}

/**
 * The `-wal` and `-shm` of a file opened in WAL mode: an older release may have left them with the
 * umask's mode. By path only, for the reason above.
 */
export function ownerOnlySqliteSidecars(file: string): void {
  for (const suffix of ['-wal', '-shm']) tighten(`${file}${suffix}`);
}

function tighten(path: string): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (mode !== 0o600) chmodSync(path, 0o600);
}
