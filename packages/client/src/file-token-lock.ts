import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { TesseraError } from './errors.js';
import { InMemoryTokenLock, type TokenLock } from './token-lock.js';
import type { StoredTokenPair } from './token-pair.js';

export interface FileTokenLockOptions {
  /** The shared state file holding the current pair. Written 0600: it holds the access and refresh token. */
  readonly statePath: string;
  /** The lock file, created with O_EXCL. Default: `${statePath}.lock`. */
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
}

const stateVersion = 1;

/**
 * Shares one token pair between processes on one machine: an O_EXCL lock file serializes
 * renewals, and a state file next to it holds the pair the last holder stored. The state
 * file is replaced atomically (write a 0600 temporary file, then rename), so a reader never
 * sees half a pair. Clients in one process that share this lock also queue in memory first,
 * so they do not poll the lock file against each other.
 *
 * Limits: a lock file is judged stale by its age, so a holder that outlives `staleAfterMs`
 * can lose its lock to another process; the lock is advisory and local (no NFS guarantees).
 */
export class FileTokenLock implements TokenLock {
  readonly statePath: string;
  readonly lockPath: string;
  readonly #staleAfterMs: number;
  readonly #acquireTimeoutMs: number;
  readonly #retryDelayMs: number;
  readonly #inProcess = new InMemoryTokenLock();

  constructor(options: FileTokenLockOptions) {
    this.statePath = options.statePath;
    this.lockPath = options.lockPath ?? `${options.statePath}.lock`;
    this.#staleAfterMs = options.staleAfterMs ?? 30_000;
    this.#acquireTimeoutMs = options.acquireTimeoutMs ?? 60_000;
    this.#retryDelayMs = options.retryDelayMs ?? 25;
  }

  async withLock<R extends StoredTokenPair | null>(critical: (stored: StoredTokenPair | undefined) => Promise<R>): Promise<R> {
    // The in-memory pair is not used: the state file is the one source of truth.
    return this.#inProcess.withLock(async () => {
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

  async #acquire(): Promise<string> {
    const ownership = randomUUID();
    const deadline = Date.now() + this.#acquireTimeoutMs;
    for (;;) {
      try {
        const handle = await open(this.lockPath, 'wx', 0o600);
        try {
          await handle.writeFile(JSON.stringify({ pid: process.pid, ownership, at: new Date().toISOString() }));
        } finally {
          await handle.close();
        }
        return ownership;
      } catch (error) {
        const code = errorCode(error);
        if (code === 'ENOENT') {
          await mkdir(dirname(this.lockPath), { recursive: true, mode: 0o700 });
          continue;
        }
        if (code !== 'EEXIST') throw error;
      }
      if (await this.#breakIfStale()) continue;
      if (Date.now() > deadline) {
        throw new TesseraError('ERR_LOCK_TIMEOUT', `could not acquire the token lock within ${this.#acquireTimeoutMs} ms`, { operation: 'lock' });
      }
      await new Promise((resolve) => setTimeout(resolve, this.#retryDelayMs + Math.random() * 25));
    }
  }

  /** Moves a stale lock file aside (rename is atomic: of two breakers only one succeeds) and deletes it. */
  async #breakIfStale(): Promise<boolean> {
    try {
      const { mtimeMs } = await stat(this.lockPath);
      if (Date.now() - mtimeMs <= this.#staleAfterMs) return false;
      const aside = `${this.lockPath}.${randomUUID()}.stale`;
      await rename(this.lockPath, aside);
      await unlink(aside).catch(() => undefined);
      return true;
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return true; // released meanwhile: try again at once
      throw error;
    }
  }

  /** Deletes the lock file only while it is still ours (it may have been broken as stale). */
  async #release(ownership: string): Promise<void> {
    try {
      const content = await readFile(this.lockPath, 'utf8');
      if (content.includes(ownership)) await unlink(this.lockPath);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
  }

  async #read(): Promise<StoredTokenPair | undefined> {
    let text: string;
    try {
      text = await readFile(this.statePath, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw error;
    }
    try {
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
    await mkdir(dirname(this.statePath), { recursive: true, mode: 0o700 });
    const temporary = `${this.statePath}.${process.pid}.${randomUUID()}.tmp`;
    try {
      await writeFile(temporary, JSON.stringify(state), { mode: 0o600, flag: 'wx' });
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

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}
