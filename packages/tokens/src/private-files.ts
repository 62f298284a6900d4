import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorCode } from '@tessera/contracts';

/** A folder only its owner may list or enter (0700), made if absent and tightened if an older release or an operator left it open. */
export function ownerOnlyFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  tightenFolder(dir);
}

/** Tightens a folder to 0700 if it exists; makes nothing. */
export function tightenFolder(dir: string): void {
  let mode: number;
  try {
    mode = statSync(dir).mode & 0o777;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (mode !== 0o700) chmodSync(dir, 0o700);
}

/**
 * Write whole and fsync, link into place, then fsync the folder (as the relay checkpoint does):
 * a reader never sees a half-written key, the first writer wins, and a key that was used to sign
 * or hash is still there after a power cut. A file already there is left as it is.
 */
export function writeExclusive(file: string, contents: string): void {
  if (existsSync(file)) return;
  const draft = writeDraft(file, contents);
  try {
    linkSync(draft, file);
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  syncFolder(dirname(file));
}

/** Write whole and fsync, then rename over `file` and fsync the folder: a reader sees the old contents or the new, never a mix. */
export function writeReplacing(file: string, contents: string): void {
  const draft = writeDraft(file, contents);
  try {
    renameSync(draft, file);
  } catch (error) {
    unlinkSync(draft);
    throw error;
  }
  syncFolder(dirname(file));
}

function writeDraft(file: string, contents: string): string {
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(draft, 'wx', 0o600);
  try {
    writeSync(fd, contents);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return draft;
}

function syncFolder(dir: string): void {
  const folder = openSync(dir, 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}
