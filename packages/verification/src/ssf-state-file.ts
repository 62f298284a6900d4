import { open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RevocationFacts } from './revocation-projection.js';

/** The stream a receiver follows: kept so a restart resumes it, and its unacknowledged SETs, instead of making a new one. */
export interface StreamPosition {
  readonly streamId: string;
  readonly aud: string;
  /** The poll endpoint (RFC 8936); absent for a push stream. */
  readonly pollUrl?: string;
}

/** One line of the file: a revocation applied, or the stream followed. */
type Line = { readonly revocation: RevocationFacts } | { readonly stream: StreamPosition };

const forgetAtOf = (revocation: RevocationFacts, clockSkewSeconds: number) => (revocation.rejectsUntil ?? ('accessExpiresAt' in revocation ? revocation.accessExpiresAt : 0)) + clockSkewSeconds;

/**
 * The revocations a receiver applied, one JSON line each, appended and fsynced before the SET is
 * acknowledged: after a restart the projection refuses what it refused before, even a SET the
 * transmitter will never send again. Lines whose tokens have all expired are dropped when the file
 * is compacted (at load, and once it holds twice as many lines as are still needed), by writing a
 * temporary file, fsyncing it and renaming it over the old one, so a crash leaves one or the other.
 */
export class RevocationStateFile {
  private live: RevocationFacts[] = [];
  private stream: StreamPosition | undefined;
  private lines = 0;
  private handle: FileHandle | undefined;
  /** Writes one after another: an append never interleaves with a compaction. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly clockSkewSeconds: number,
    private readonly nowSeconds: () => number,
  ) {}

  /** Reads the file (a missing one is empty), then compacts it; returns what to apply and the stream followed. */
  async load(): Promise<{ revocations: readonly RevocationFacts[]; stream: StreamPosition | undefined }> {
    let content = '';
    try {
      content = await readFile(this.path, 'utf8');
    } catch (error) {
      // Cast: readFile rejects with a system error, which carries `code`.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    for (const raw of content.split('\n')) {
      if (raw.trim() === '') continue;
      const line = parseLine(raw);
      // A torn last line (a crash in the middle of an append) was never acknowledged: the transmitter sends its SET again.
      if (line === undefined) continue;
      if ('stream' in line) this.stream = line.stream;
      else this.live.push(line.revocation);
    }
    await this.compact();
    return { revocations: this.live, stream: this.stream };
  }

  /** Appends and fsyncs; resolves once the lines are on disk. */
  append(revocations: readonly RevocationFacts[]): Promise<void> {
    if (revocations.length === 0) return Promise.resolve();
    return this.enqueue(async () => {
      this.live.push(...revocations);
      await this.write(revocations.map((revocation) => JSON.stringify({ revocation } satisfies Line)));
      if (this.lines > 1024 && this.lines > 2 * this.live.length) await this.compactNow();
    });
  }

  rememberStream(stream: StreamPosition): Promise<void> {
    return this.enqueue(async () => {
      this.stream = stream;
      await this.write([JSON.stringify({ stream } satisfies Line)]);
    });
  }

  close(): Promise<void> {
    return this.enqueue(async () => {
      await this.handle?.close();
      this.handle = undefined;
    });
  }

  private compact(): Promise<void> {
    return this.enqueue(() => this.compactNow());
  }

  private async compactNow(): Promise<void> {
    const now = this.nowSeconds();
    this.live = this.live.filter((revocation) => forgetAtOf(revocation, this.clockSkewSeconds) > now);
    const content = [...(this.stream ? [JSON.stringify({ stream: this.stream } satisfies Line)] : []), ...this.live.map((revocation) => JSON.stringify({ revocation } satisfies Line))];
    await this.handle?.close();
    this.handle = undefined;
    const temporary = `${this.path}.${process.pid}.tmp`;
    const file = await open(temporary, 'w', 0o600);
    try {
      await file.writeFile(content.map((line) => `${line}\n`).join(''));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, this.path);
    // The rename itself is durable only once the folder is synced.
    const folder = await open(dirname(this.path), 'r');
    try {
      await folder.sync();
    } finally {
      await folder.close();
    }
    this.lines = content.length;
  }

  private async write(lines: readonly string[]): Promise<void> {
    this.handle ??= await open(this.path, 'a', 0o600);
    await this.handle.appendFile(lines.map((line) => `${line}\n`).join(''));
    await this.handle.sync();
    this.lines += lines.length;
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    // A failed write fails its caller; the next one still runs.
    this.queue = next.catch(() => undefined);
    return next;
  }
}

function parseLine(raw: string): Line | undefined {
  try {
    // The receiver's own file, written by append(): only its two shapes are ever in it.
    const line = JSON.parse(raw) as Line;
    return typeof line === 'object' && line !== null && ('stream' in line || 'revocation' in line) ? line : undefined;
  } catch {
    return undefined;
  }
}
