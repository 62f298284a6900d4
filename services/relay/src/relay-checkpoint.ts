import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Where the relay has got to: every event at or before this position has been acknowledged by the feed. */
export interface RelayCheckpoint {
  load(): Promise<bigint | undefined>;
  save(position: bigint): Promise<void>;
}

export class RelayCheckpointCorrupt extends Error {
  readonly code = 'ERR_RELAY_CHECKPOINT_CORRUPT';
  constructor(file: string, options?: { cause?: unknown }) {
    super(`relay checkpoint ${file} is unreadable; delete it to republish the whole log (consumers dedupe)`, options);
    this.name = 'RelayCheckpointCorrupt';
  }
}

export function defaultCheckpointFile(dataDir: string): string {
  return join(dataDir, 'relay-checkpoint.json');
}

/**
 * A file rather than a table: the relay follows EventStoreDB in production, where there is no
 * SQLite to put it in, and the checkpoint is one number with one writer. Each save writes a
 * temp file, fsyncs it, renames it over the old one and fsyncs the folder, so after a crash the
 * file holds either the old or the new position, whole and on disk. Saves come once per acked
 * batch, so the fsyncs cost little next to the broker round trip.
 */
export function createFileCheckpoint(file: string): RelayCheckpoint {
  const folder = dirname(file);
  return {
    async load() {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      try {
        const parsed = JSON.parse(text) as { position?: unknown };
        if (typeof parsed.position !== 'string' || !/^\d+$/.test(parsed.position)) throw new TypeError('no position');
        return BigInt(parsed.position);
      } catch (error) {
        throw new RelayCheckpointCorrupt(file, { cause: error });
      }
    },
    async save(position) {
      mkdirSync(folder, { recursive: true });
      const temp = `${file}.${process.pid}.tmp`;
      const fd = openSync(temp, 'w');
      try {
        writeSync(fd, `${JSON.stringify({ position: position.toString(), savedAt: new Date().toISOString() })}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, file);
      const dirFd = openSync(folder, 'r');
      try {
        fsyncSync(dirFd);
      } finally {
        closeSync(dirFd);
      }
    },
  };
}

/** For tests and the all-in-one with an in-process feed, where nothing outlives the process anyway. */
export function createMemoryCheckpoint(initial?: bigint): RelayCheckpoint & { readonly current: () => bigint | undefined } {
  let position = initial;
  return {
    load: async () => position,
    save: async (next) => {
      position = next;
    },
    current: () => position,
  };
}
