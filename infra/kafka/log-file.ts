import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** Reads `file` from the byte `from` picks (given the size) to its end; an unreadable file reads as empty. */
function readRange(file: string, from: (size: number) => number): Buffer {
  try {
    const size = statSync(file).size;
    const start = Math.max(0, Math.min(from(size), size));
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(size - start);
      readSync(fd, buffer, 0, buffer.length, start);
      return buffer;
    } finally {
      closeSync(fd);
    }
  } catch {
    return Buffer.alloc(0);
  }
}

/** The last `bytes` of a log, for an error message that says why a process did not come up. */
export function tail(file: string, bytes = 4000): string {
  return readRange(file, (size) => size - bytes).toString('utf8');
}

/** What a log gained since `offset` (a size taken before a start): where a readiness scan looks. */
export function readLogSince(file: string, offset: number): string {
  return readRange(file, () => offset).toString('utf8');
}

export function logContainsSince(file: string, offset: number, needle: string): boolean {
  return readRange(file, () => offset).includes(needle);
}
