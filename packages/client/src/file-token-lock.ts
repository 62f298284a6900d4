import { randomUUID } from 'node:crypto';
import { rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { TesseraError } from './errors.js';
import { checkedEntry, createPrivateFile, ensurePrivateDirectory, errorCode, readPrivateFile } from './private-files.js';
import { InMemoryTokenLock, type TokenLock } from './token-lock.js';
import type { StoredTokenPair } from './token-pair.js';
import { systemTime } from './system-time.js';

export interface FileTokenLockOptions {
  /**
   * The shared state file holding the current pair. Written 0600: it holds the access and
   * refresh token. Its directory must be private to this user (owned by it, mode 0700, not a
   * symbolic link); a missing one is created so.
   */
  readonly statePath: string;
  /** The lock file, created with O_EXCL. Default: `${statePath}.lock`. Its directory must be private too. */
  readonly lockPath?: string;
  /**
   * A lock file older than this is taken to be left by a crashed holder and is broken.
   * Must exceed the longest time a holder keeps it (one token request, bounded by the
   * client's requestTimeoutMs, 10 s by default). Default 30 000 ms.
   */
  readonly staleAfterMs?: number;
  /** Give up acquiring with ERR_LOCK_TIMEOUT after this long. Default 60 000 ms. */
  readonly acquireTimeoutMs?: number;
  /** Pause between attempts to create the lock file. Default 25 ms, plus up to 25 ms of jitter. */
  readonly retryDelayMs?: number;
  /** Epoch milliseconds, for deadlines and a lock's age. Default the machine's time. */
  readonly clock?: () => number;
}

const stateVersion = 1;

/**
 * Shares one token pair between processes on one machine: an O_EXCL lock file serializes
 * renewals, and a state file next to it holds the pair the last holder stored. The state
 * file is replaced atomically (write a 0600 temporary file, then rename), so a reader never
 * sees half a pair. Clients in one process that share this lock also queue in memory first,
 * so they do not poll the lock file against each other.
 *
 * Only this user's files are trusted (see private-files.ts): the directory must be private,
 * and a lock or state file that another user owns, that group or others may write, that is a
 * symbolic link or not a regular file is refused with UnsafeTokenFileError, never read, never
 * broken and never replaced. The processes that share a pair therefore run as one user.
 *
 * Limits: a lock file is judged stale by its age, so a holder that outlives `staleAfterMs`
 * can lose its lock to another process; the lock is advisory and local (no NFS guarantees).
 */
export class FileTokenLock implements TokenLock {
  readonly statePath: string;
  readonly lockPath: string;
  readonly #staleAfterMs: number;
  readonly #acquireTimeoutMs: number;
  readonly #clock: () => number;
  readonly #retryDelayMs: number;
  readonly #inProcess = new InMemoryTokenLock();

  constructor(options: FileTokenLockOptions) {
    this.statePath = options.statePath;
    this.lockPath = options.lockPath ?? `${options.statePath}.lock`;
    this.#staleAfterMs = options.staleAfterMs ?? 30_000;
    this.#acquireTimeoutMs = options.acquireTimeoutMs ?? 60_000;
    this.#clock = options.clock ?? systemTime;
    this.#retryDelayMs = options.retryDelayMs ?? 25;
  }

  async withLock<R extends StoredTokenPair | null>(critical: (stored: StoredTokenPair | undefined) => Promise<R>): Promise<R> {
    // The in-memory pair is not used: the state file is the one source of truth.
    return this.#inProcess.withLock(async () => {
      await this.#ensurePrivateDirectories();
      const ownership = await this.#acquire();
      try {
        const stored = await this.#read();
        const next = await critical(stored);
        if (next === null) await this.#clear();
        else if (next !== stored) await this.#write(next);
        return next;
      } finally {
        await this.#release(ownership);
      }
    });
  }

  async #ensurePrivateDirectories(): Promise<void> {
    const directories = new Set([dirname(this.statePath), dirname(this.lockPath)]);
    for (const directory of directories) await ensurePrivateDirectory(directory);
  }

  async #acquire(): Promise<string> {
    const ownership = randomUUID();
    const deadline = this.#clock() + this.#acquireTimeoutMs;
    for (;;) {
      try {
        await createPrivateFile(this.lockPath, JSON.stringify({ pid: process.pid, ownership, at: new Date(this.#clock()).toISOString() }));
        return ownership;
      } catch (error) {
        const code = errorCode(error);
        if (code === 'ENOENT') {
          // The directory went away since it was checked: create and check it again.
          await this.#ensurePrivateDirectories();
          continue;
        }
        if (code !== 'EEXIST') throw error;
      }
      if (await this.#breakIfStale()) continue;
      if (this.#clock() > deadline) {
        throw new TesseraError('ERR_LOCK_TIMEOUT', `could not acquire the token lock within ${this.#acquireTimeoutMs} ms`, { operation: 'lock' });
      }
      await new Promise((resolve) => setTimeout(resolve, this.#retryDelayMs + Math.random() * 25));
    }
  }

  /**
   * Moves a stale lock file aside (rename is atomic: of two breakers only one succeeds) and
   * deletes it. A lock that fails the checks is refused, not broken: breaking another user's
   * lock is not ours to do, and in a shared directory it would fail with EPERM anyway.
   */
  async #breakIfStale(): Promise<boolean> {
    const stats = await checkedEntry(this.lockPath);
    if (stats === undefined) return true; // released meanwhile: try again at once
    if (this.#clock() - stats.mtimeMs <= this.#staleAfterMs) return false;
    const aside = `${this.lockPath}.${randomUUID()}.stale`;
    try {
      await rename(this.lockPath, aside);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return true;
      throw error;
    }
    await unlink(aside).catch(() => undefined);
    return true;
  }

  /** Deletes the lock file only while it is still ours (it may have been broken as stale). */
  async #release(ownership: string): Promise<void> {
    const content = await readPrivateFile(this.lockPath);
    if (content?.includes(ownership)) await unlink(this.lockPath);
  }

  async #read(): Promise<StoredTokenPair | undefined> {
    const text = await readPrivateFile(this.statePath);
    if (text === undefined) return undefined;
    try {
      // Cast: JSON.parse returns any; each field is checked for its type below.
      const state = JSON.parse(text) as Record<string, unknown>;
      const { version, owner, token, refresh_token: refreshToken, obtained_at: obtainedAt, expires_at: expiresAt } = state;
      if (version !== stateVersion || typeof owner !== 'string' || typeof token !== 'string' || typeof refreshToken !== 'string') return undefined;
      if (typeof obtainedAt !== 'number' || typeof expiresAt !== 'number') return undefined;
      return { owner, token, refreshToken, obtainedAt, expiresAt };
    } catch {
      return undefined; // an unreadable state is no state: the client starts over with its credentials
    }
  }

  async #write(pair: StoredTokenPair): Promise<void> {
    const state = {
      version: stateVersion,
      owner: pair.owner,
      token: pair.token,
      refresh_token: pair.refreshToken,
      obtained_at: pair.obtainedAt,
      expires_at: pair.expiresAt,
    };
    const temporary = `${this.statePath}.${process.pid}.${randomUUID()}.tmp`;
    try {
      // rename replaces the name itself: it never writes through a link planted at statePath.
      await createPrivateFile(temporary, JSON.stringify(state));
      await rename(temporary, this.statePath);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  }

  async #clear(): Promise<void> {
    await unlink(this.statePath).catch((error: unknown) => {
      if (errorCode(error) !== 'ENOENT') throw error;
    });
  }
}
