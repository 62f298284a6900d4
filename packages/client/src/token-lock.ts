import type { StoredTokenPair } from './token-pair.js';

/**
 * Coordinates every client that shares one token pair (docs/client.md: one worker refreshes at a
 * time). The lock also holds the pair: whoever acquires it reads the pair the previous holder
 * stored, so a second worker adopts the pair the first just obtained instead of refreshing
 * with a refresh token that is already used.
 *
 * One lock holds one pair: give each account its own lock.
 */
export interface TokenLock {
  /**
   * Runs `critical` while holding the lock exclusively. `critical` receives the stored pair
   * (undefined if none) and returns the pair to store, or null to clear it; it is stored
   * before the lock is released. If `critical` throws, the stored pair is left unchanged.
   */
  withLock<R extends StoredTokenPair | null>(critical: (stored: StoredTokenPair | undefined) => Promise<R>): Promise<R>;
}

/** A lock and pair shared by the clients of one process. Every client gets a private one by default. */
export class InMemoryTokenLock implements TokenLock {
  #pair: StoredTokenPair | undefined;
  #tail: Promise<void> = Promise.resolve();

  async withLock<R extends StoredTokenPair | null>(critical: (stored: StoredTokenPair | undefined) => Promise<R>): Promise<R> {
    const previous = this.#tail;
    let release: () => void = () => undefined;
    this.#tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      const next = await critical(this.#pair);
      this.#pair = next ?? undefined;
      return next;
    } finally {
      release();
    }
  }
}
