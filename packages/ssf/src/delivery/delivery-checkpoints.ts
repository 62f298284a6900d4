import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CodedError, errorCode } from '@tessera/events';
import { replaceFileDurably } from '@tessera/host';
import { z } from 'zod';

/**
 * Where each stream's delivery has got to: every SET of an event at or before its position was
 * delivered (acknowledged), or needed none. One file for every stream, written whole (temp file,
 * fsync, rename, fsync of the folder), so after a crash it holds the old or the new positions, never
 * a mix; saves are coalesced, one at a time. A crash between an acknowledgment and the save only
 * delivers again, with the same jti.
 */
export interface DeliveryCheckpoints {
  get(streamId: string): bigint | undefined;
  set(streamId: string, position: bigint): void;
  forget(streamId: string): void;
  /** Resolves once what was set before the call is on disk. */
  flush(): Promise<void>;
}

export class DeliveryCheckpointsCorrupt extends CodedError {
  readonly code = 'ERR_SSF_CHECKPOINTS_CORRUPT';
  constructor(file: string, options?: { cause?: unknown }) {
    super(`the Shared Signals checkpoint file ${file} is unreadable; delete it to deliver every stream's SETs again from each stream's start (receivers drop duplicates by jti)`, options);
    this.name = 'DeliveryCheckpointsCorrupt';
  }
}

export function createFileCheckpoints(file: string, onSaveError: (error: unknown) => void): DeliveryCheckpoints {
  const positions = readCheckpointFile(file);
  let dirty = false;
  let saving: Promise<void> | undefined;

  async function write(): Promise<void> {
    const folder = dirname(file);
    await mkdir(folder, { recursive: true });
    const text = `${JSON.stringify({ streams: Object.fromEntries([...positions].map(([id, position]) => [id, position.toString()])) })}\n`;
    await replaceFileDurably(file, text);
  }

  async function saveWhileDirty(): Promise<void> {
    while (dirty) {
      dirty = false;
      try {
        await write();
      } catch (error) {
        // Not fatal: the next save covers this one; a crash before it only delivers again.
        onSaveError(error);
      }
    }
    saving = undefined;
  }

  const schedule = () => {
    dirty = true;
    saving ??= saveWhileDirty();
  };

  return {
    get: (streamId) => positions.get(streamId),
    set(streamId, position) {
      if (positions.get(streamId) === position) return;
      positions.set(streamId, position);
      schedule();
    },
    forget(streamId) {
      if (positions.delete(streamId)) schedule();
    },
    async flush() {
      await saving;
    },
  };
}

/** What the file holds (read once more, by the first lease holder after an upgrade): each stream's position, as decimal digits (a bigint has no JSON form). */
const CheckpointsFile = z.object({ streams: z.record(z.string(), z.string().regex(/^\d+$/)) });

export function readCheckpointFile(file: string): Map<string, bigint> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return new Map();
    throw error;
  }
  try {
    const { streams } = CheckpointsFile.parse(JSON.parse(text));
    return new Map(Object.entries(streams).map(([id, position]) => [id, BigInt(position)]));
  } catch (error) {
    throw new DeliveryCheckpointsCorrupt(file, { cause: error });
  }
}

/** For tests: nothing outlives the process. */
export function createMemoryCheckpoints(): DeliveryCheckpoints {
  const positions = new Map<string, bigint>();
  return {
    get: (streamId) => positions.get(streamId),
    set: (streamId, position) => void positions.set(streamId, position),
    forget: (streamId) => void positions.delete(streamId),
    flush: async () => undefined,
  };
}
