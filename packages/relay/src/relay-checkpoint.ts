import { chmodSync, readFileSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CodedError, errorCode } from '@tessera/contracts';
import { ownerOnlyDataFolder, replaceFileDurably } from '@tessera/host';
import { systemClock, type Clock } from '@tessera/timing';
import { z } from 'zod';

/** Where the relay has got to: every event at or before this position has been acknowledged by the feed. */
export interface RelayCheckpoint {
  load(): Promise<bigint | undefined>;
  save(position: bigint): Promise<void>;
}

export class RelayCheckpointCorrupt extends CodedError {
  readonly code = 'ERR_RELAY_CHECKPOINT_CORRUPT';
  constructor(file: string, options?: { cause?: unknown }) {
    super(`relay checkpoint ${file} is unreadable; delete it to republish the whole log (consumers dedupe)`, options);
    this.name = 'RelayCheckpointCorrupt';
  }
}

/** What the file holds: the position of the last event published, as decimal digits (a bigint has no JSON form). */
const CheckpointFile = z.object({ position: z.string().regex(/^\d+$/) });

export function defaultCheckpointFile(dataDir: string): string {
  return join(dataDir, 'relay-checkpoint.json');
}

/**
 * A file rather than a table: the relay follows EventStoreDB in production, where there is no
 * SQLite to put it in, and the checkpoint is one number with one writer. Each save writes a
 * temp file, fsyncs it, renames it over the old one and fsyncs the folder, so after a crash the
 * file holds either the old or the new position, whole and on disk. The relay does not wait for
 * a save before publishing the next batch (relay.ts): saves run one at a time, each of the
 * newest acknowledged position.
 *
 * The folder is the data folder, which a standalone relay may be the first to make (its log is
 * elsewhere): it is made 0700 and the file 0600, as everything else there, and a folder or file
 * an older release left with the umask's mode is tightened (the folder on the first save, the
 * file as it is loaded).
 */
export function createFileCheckpoint(file: string, clock: Clock = systemClock): RelayCheckpoint {
  const folder = dirname(file);
  let folderChecked = false;
  return {
    async load() {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
        if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return undefined;
        throw error;
      }
      try {
        return BigInt(CheckpointFile.parse(JSON.parse(text)).position);
      } catch (error) {
        throw new RelayCheckpointCorrupt(file, { cause: error });
      }
    },
    async save(position) {
      // Asynchronous file calls: the fsyncs run on libuv's pool, not on the thread that answers
      // requests (in the all-in-one the relay shares it with the issuer and the verifier).
      await mkdir(folder, { recursive: true, mode: 0o700 });
      if (!folderChecked) {
        ownerOnlyDataFolder(folder);
        folderChecked = true;
      }
      await replaceFileDurably(file, `${JSON.stringify({ position: position.toString(), savedAt: new Date(clock.now()).toISOString() })}\n`);
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
