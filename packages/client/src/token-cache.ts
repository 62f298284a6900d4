import { isFresh, type CachedToken } from './token-pair.js';

/**
 * The in-process half of refreshing one pair at a time (docs/client.md): a cached token and at most one renewal in flight. Any
 * number of concurrent callers that find the token stale share that one renewal.
 *
 * `renew(rejected)` obtains a new token; `rejected` is the token a server just refused
 * with 401, which must not be handed out again even though its time has not run out.
 */
export class TokenCache<T extends CachedToken> {
  readonly #renew: (rejected: string | undefined) => Promise<T>;
  readonly #clock: () => number;
  readonly #skewMs: number;
  #current: T | undefined;
  #renewal: Promise<T> | undefined;

  constructor(renew: (rejected: string | undefined) => Promise<T>, clock: () => number, skewMs: number) {
    this.#renew = renew;
    this.#clock = clock;
    this.#skewMs = skewMs;
  }

  get current(): T | undefined {
    return this.#current;
  }

  isFresh(token: CachedToken): boolean {
    return isFresh(token, this.#clock(), this.#skewMs);
  }

  /** The cached token when fresh; otherwise the result of the one renewal in flight. */
  get(): Promise<T> {
    const current = this.#current;
    if (current && this.isFresh(current)) return Promise.resolve(current);
    return this.renew(undefined);
  }

  /** Not async on purpose: the check for a renewal in flight and its start happen in one synchronous step. */
  renew(rejected: string | undefined): Promise<T> {
    const running = this.#renewal;
    if (running) {
      // The renewal in flight yields a token newer than the rejected one, unless it is that very token.
      return rejected === undefined ? running : running.then((token) => (token.token === rejected ? this.renew(rejected) : token));
    }
    const renewal = this.#renew(rejected)
      .then((token) => {
        this.#current = token;
        return token;
      })
      .finally(() => {
        if (this.#renewal === renewal) this.#renewal = undefined;
      });
    this.#renewal = renewal;
    return renewal;
  }

  /** Waits for a renewal in flight, ignoring its outcome. */
  async settle(): Promise<void> {
    await this.#renewal?.catch(() => undefined);
  }

  clear(): void {
    this.#current = undefined;
  }
}
