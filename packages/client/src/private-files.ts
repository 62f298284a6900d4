import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { UnsafeTokenFileError } from './errors.js';

/**
 * The checks FileTokenLock makes before it trusts a path: the token pair it shares is worth
 * stealing, and worth planting. Another local user who can place a file where the lock looks
 * could make a client work as their account (a planted pair), deny it service (a planted lock
 * it cannot remove), or redirect a read or write (a symbolic link). So the directory must be
 * private to this user, each file in it must be this user's own regular file that nobody else
 * may write, and no symbolic link is ever followed.
 */

// O_NOFOLLOW: a symbolic link at the final name fails the open (ELOOP) instead of being followed.
// O_NONBLOCK: a FIFO planted as a file opens at once (and is then refused) instead of blocking.
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;
const openReadFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const createFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;

/** The uid files must belong to; undefined where the platform has no POSIX owners (Windows). */
const currentUid = (): number | undefined => process.getuid?.();

const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

/** Why `stats` (from lstat or fstat) cannot be trusted as a private directory or file; undefined if it can. */
function refusalOf(stats: Stats, kind: 'directory' | 'file', uid: number): string | undefined {
  if (stats.isSymbolicLink()) return 'it is a symbolic link, and symbolic links are never followed';
  if (kind === 'directory' && !stats.isDirectory()) return 'it is not a directory';
  if (kind === 'file' && !stats.isFile()) return 'it is not a regular file';
  if (stats.uid !== uid) return `it is owned by uid ${stats.uid}, not by this process's uid ${uid}`;
  if (kind === 'directory' && (stats.mode & 0o077) !== 0) {
    const access = (stats.mode & 0o022) !== 0 ? 'writable by group or others' : 'open to group or others';
    return `its mode ${octal(stats.mode)} makes it ${access}; the directory must be private to this user (mode 0700)`;
  }
  if (kind === 'file' && (stats.mode & 0o022) !== 0) return `its mode ${octal(stats.mode)} makes it writable by group or others`;
  return undefined;
}

function requireUid(path: string): number {
  const uid = currentUid();
  if (uid === undefined) throw new UnsafeTokenFileError(path, 'this platform has no POSIX file owners, so the file cannot be checked');
  return uid;
}

/**
 * Creates the directory (mode 0700, with any missing parents) if it is missing, then refuses
 * it unless it is a real directory of this user that no one else may use. Only the directory
 * itself is checked, not its parents.
 */
export async function ensurePrivateDirectory(path: string): Promise<void> {
  const uid = requireUid(path);
  let stats = await lstatIfPresent(path);
  if (stats === undefined) {
    await mkdir(path, { recursive: true, mode: 0o700 });
    stats = await lstat(path);
  }
  const reason = refusalOf(stats, 'directory', uid);
  if (reason) throw new UnsafeTokenFileError(path, reason);
}

/** Refuses an existing entry (not followed if it is a link) that fails the file checks; undefined once it is gone. */
export async function checkedEntry(path: string): Promise<Stats | undefined> {
  const uid = requireUid(path);
  const stats = await lstatIfPresent(path);
  if (stats === undefined) return undefined;
  const reason = refusalOf(stats, 'file', uid);
  if (reason) throw new UnsafeTokenFileError(path, reason);
  return stats;
}

/**
 * The text of a file that passes the checks, or undefined if there is none. The checks are
 * made on the opened file (fstat), so the file read is the file checked.
 */
export async function readPrivateFile(path: string): Promise<string | undefined> {
  const uid = requireUid(path);
  let handle: FileHandle;
  try {
    handle = await open(path, openReadFlags);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return undefined;
    // Linux and macOS answer ELOOP for a link under O_NOFOLLOW; FreeBSD answers EMLINK.
    if (code === 'ELOOP' || code === 'EMLINK') throw new UnsafeTokenFileError(path, 'it is a symbolic link, and symbolic links are never followed');
    throw error;
  }
  try {
    const reason = refusalOf(await handle.stat(), 'file', uid);
    if (reason) throw new UnsafeTokenFileError(path, reason);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** Creates a new file, mode 0600, that must not exist yet, not even as a link; EEXIST if it does. */
export async function createPrivateFile(path: string, content: string): Promise<void> {
  const handle = await open(path, createFlags, 0o600);
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

async function lstatIfPresent(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}
