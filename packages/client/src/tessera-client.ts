import { authorizedFetch, resolveUrl, type TesseraFetchInit } from './authorized-fetch.js';
import { TesseraError } from './errors.js';
import { TokenCache } from './token-cache.js';
import { InMemoryTokenLock, type TokenLock } from './token-lock.js';
import { pairFromTokenResponse, type StoredTokenPair } from './token-pair.js';
import { baseOf, postJson, type FetchLike, type Transport } from './transport.js';
import { SecretSet } from './secret-set.js';

export interface TesseraClientOptions {
  /** `{base_url}` of the current interface, https. */
  readonly baseUrl: string;
  readonly apiLoginId: string;
  /** Secret. Sent only to get-oauth-token, never on protected requests. */
  readonly transactionKey: string;
  /** Renew this long before `expires` (capped at half the token's life). Default 60. */
  readonly refreshSkewSeconds?: number;
  /** Default: Node's global fetch. */
  readonly fetch?: FetchLike;
  /** Shares the pair with other clients or processes. Default: a lock private to this client. */
  readonly lock?: TokenLock;
  /** Time limit of each token operation. Default 10 000 ms. */
  readonly requestTimeoutMs?: number;
  /** Epoch milliseconds. Default Date.now; tests move it. */
  readonly clock?: () => number;
}

/**
 * The current interface (spec 4.1–4.4): caches the access token until shortly before it
 * expires, refreshes with the current refresh token (one refresh in flight per process, one
 * per lock across processes), and falls back to the API Login ID and Transaction Key when
 * the refresh token is expired, used or revoked (spec 5.7), or when the refresh answers 503
 * (its family's home region out of reach, in a multi-region deployment).
 */
export class TesseraClient {
  readonly baseUrl: string;
  readonly apiLoginId: string;
  readonly #base: URL;
  readonly #transactionKey: string;
  readonly #owner: string;
  readonly #lock: TokenLock;
  readonly #clock: () => number;
  readonly #secrets: SecretSet;
  readonly #transport: Transport;
  readonly #cache: TokenCache<StoredTokenPair>;
  #closed = false;

  constructor(options: TesseraClientOptions) {
    this.#base = baseOf(options.baseUrl, 'baseUrl');
    if (!options.apiLoginId) throw new TypeError('apiLoginId is required');
    if (!options.transactionKey) throw new TypeError('transactionKey is required');
    this.baseUrl = options.baseUrl;
    this.apiLoginId = options.apiLoginId;
    this.#transactionKey = options.transactionKey;
    this.#owner = `${this.#base.href} ${options.apiLoginId}`;
    this.#lock = options.lock ?? new InMemoryTokenLock();
    this.#clock = options.clock ?? Date.now;
    this.#secrets = new SecretSet([options.transactionKey]);
    this.#transport = {
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      timeoutMs: options.requestTimeoutMs ?? 10_000,
      secrets: () => this.#secrets.values(),
    };
    const skewMs = (options.refreshSkewSeconds ?? 60) * 1000;
    this.#cache = new TokenCache((rejected) => this.#renew(rejected), this.#clock, skewMs);
  }

  /** A usable access token: the cached one while fresh, else a renewed one. */
  async getAccessToken(): Promise<string> {
    this.#assertOpen();
    return (await this.#cache.get()).token;
  }

  /**
   * fetch with `Authorization: Bearer <token>`. A relative URL resolves against baseUrl. See
   * TesseraFetchInit for the retry after a 401; every other answer is returned as is.
   */
  async fetch(input: string | URL, init: TesseraFetchInit = {}): Promise<Response> {
    this.#assertOpen();
    return authorizedFetch(this.#transport, this.#cache, 'Bearer', resolveUrl(input, this.#base), init);
  }

  /**
   * Revokes the refresh token (spec 4.3), which also invalidates its access token, and
   * clears the stored pair. With a shared lock this ends the pair for every sharer; they fall
   * back to their credentials. Closing twice does nothing; a closed client refuses work.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#cache.settle();
    const remembered = this.#cache.current;
    this.#cache.clear();
    await this.#lock.withLock(async (stored) => {
      const ours = stored?.owner === this.#owner ? stored : undefined;
      const refreshToken = ours?.refreshToken ?? remembered?.refreshToken;
      if (refreshToken) await this.#revoke(refreshToken);
      return stored && !ours ? stored : null;
    });
  }

  #renew(rejected: string | undefined): Promise<StoredTokenPair> {
    return this.#lock.withLock(async (stored) => {
      const ours = stored?.owner === this.#owner ? stored : undefined;
      // Another client or process renewed while we waited for the lock: adopt its pair.
      if (ours && ours.token !== rejected && this.#cache.isFresh(ours)) {
        this.#secrets.add(ours.token, ours.refreshToken);
        return ours;
      }
      const refreshToken = ours?.refreshToken ?? this.#cache.current?.refreshToken;
      if (refreshToken) {
        try {
          return await this.#refresh(refreshToken);
        } catch (error) {
          // Expired, used or revoked (spec 5.7): start over with the credentials. Also a 503: the
          // family's home region may be out of reach (docs/multi-region.md), and a new family,
          // homed where the client now is, beats waiting. If this region itself is down, the
          // credentials answer 503 as well, and that error is the one thrown.
          if (!(error instanceof TesseraError && (error.code === 'ERR_INVALID_TOKEN' || (error.code === 'ERR_SERVER' && error.status === 503)))) throw error;
        }
      }
      return this.#getToken();
    });
  }

  async #getToken(): Promise<StoredTokenPair> {
    const sentAt = this.#clock();
    const body = await postJson(this.#transport, 'get-oauth-token', new URL('v5/Authorization/get-oauth-token', this.#base), {
      api_login_id: this.apiLoginId,
      transaction_key: this.#transactionKey,
    });
    return this.#remember(pairFromTokenResponse(body, this.#owner, sentAt, 'get-oauth-token'));
  }

  async #refresh(refreshToken: string): Promise<StoredTokenPair> {
    this.#secrets.add(refreshToken);
    const sentAt = this.#clock();
    const body = await postJson(this.#transport, 'refresh-oauth-token', new URL('v5/Authorization/refresh-oauth-token', this.#base), {
      refresh_token: refreshToken,
    });
    return this.#remember(pairFromTokenResponse(body, this.#owner, sentAt, 'refresh-oauth-token'));
  }

  async #revoke(refreshToken: string): Promise<void> {
    this.#secrets.add(refreshToken);
    try {
      await postJson(this.#transport, 'revoke-oauth-token', new URL('v5/Authorization/revoke-oauth-token', this.#base), {
        refresh_token: refreshToken,
      });
    } catch (error) {
      // Already used, revoked or expired: it is unusable, which is what close() wants.
      if (!(error instanceof TesseraError && error.code === 'ERR_INVALID_TOKEN')) throw error;
    }
  }

  #remember(pair: StoredTokenPair): StoredTokenPair {
    this.#secrets.add(pair.token, pair.refreshToken);
    return pair;
  }

  #assertOpen(): void {
    if (this.#closed) throw new TesseraError('ERR_CLIENT_CLOSED', 'the client was closed', { operation: 'fetch' });
  }

  /** Logging a client shows no secret. */
  toJSON(): Record<string, string> {
    return { baseUrl: this.baseUrl, apiLoginId: this.apiLoginId };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `TesseraClient { baseUrl: ${JSON.stringify(this.baseUrl)}, apiLoginId: ${JSON.stringify(this.apiLoginId)} }`;
  }
}
