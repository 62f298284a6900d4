import type { TesseraFetchInit } from './authorized-fetch.js';
import { ClientSession } from './client-session.js';
import { TesseraError } from './errors.js';
import { InMemoryTokenLock, type TokenLock } from './token-lock.js';
import { pairFromTokenResponse, type StoredTokenPair } from './token-pair.js';
import { postJson, type FetchLike } from './transport.js';

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
  /** Epoch milliseconds. Default the machine's time; tests move it. */
  readonly clock?: () => number;
}

/**
 * The current interface (get-oauth-token, refresh, revoke, protected requests): caches the access token until shortly before it
 * expires, refreshes with the current refresh token (one refresh in flight per process, one
 * per lock across processes), and falls back to the API Login ID and Transaction Key when
 * the refresh token is expired, used or revoked (docs/client.md), or when the refresh answers 503
 * (its family's home region out of reach, in a multi-region deployment).
 */
export class TesseraClient {
  readonly baseUrl: string;
  readonly apiLoginId: string;
  readonly #transactionKey: string;
  readonly #owner: string;
  readonly #lock: TokenLock;
  readonly #session: ClientSession<StoredTokenPair>;

  constructor(options: TesseraClientOptions) {
    const credentials = [['baseUrl', options.baseUrl], ['apiLoginId', options.apiLoginId], ['transactionKey', options.transactionKey]] as const;
    this.#session = new ClientSession(options, credentials, (rejected) => this.#renew(rejected));
    [this.baseUrl, this.apiLoginId, this.#transactionKey] = [options.baseUrl, this.#session.identifier, this.#session.secret];
    this.#owner = `${this.#session.base.href} ${options.apiLoginId}`;
    this.#lock = options.lock ?? new InMemoryTokenLock();
  }

  /** A usable access token: the cached one while fresh, else a renewed one. */
  async getAccessToken(): Promise<string> {
    return this.#session.accessToken();
  }

  /**
   * fetch with `Authorization: Bearer <token>`. A relative URL resolves against baseUrl. See
   * TesseraFetchInit for the retry after a 401; every other answer is returned as is.
   */
  async fetch(input: string | URL, init: TesseraFetchInit = {}): Promise<Response> {
    return this.#session.fetch('Bearer', input, init);
  }

  /**
   * Revokes the refresh token (revoke-oauth-token), which also invalidates its access token, and
   * clears the stored pair. With a shared lock this ends the pair for every sharer; they fall
   * back to their credentials. Closing twice does nothing; a closed client refuses work.
   */
  async close(): Promise<void> {
    if (this.#session.closed) return;
    const remembered = await this.#session.close();
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
      if (ours && ours.token !== rejected && this.#session.cache.isFresh(ours)) {
        this.#session.secrets.add(ours.token, ours.refreshToken);
        return ours;
      }
      const refreshToken = ours?.refreshToken ?? this.#session.cache.current?.refreshToken;
      if (refreshToken) {
        try {
          return await this.#refresh(refreshToken);
        } catch (error) {
          // Expired, used or revoked: start over with the credentials. Also a 503: the
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
    const sentAt = this.#session.clock();
    const body = await postJson(this.#session.transport, 'get-oauth-token', new URL('v5/Authorization/get-oauth-token', this.#session.base), {
      api_login_id: this.apiLoginId,
      transaction_key: this.#transactionKey,
    });
    return this.#remember(pairFromTokenResponse(body, this.#owner, sentAt, 'get-oauth-token'));
  }

  async #refresh(refreshToken: string): Promise<StoredTokenPair> {
    this.#session.secrets.add(refreshToken);
    const sentAt = this.#session.clock();
    const body = await postJson(this.#session.transport, 'refresh-oauth-token', new URL('v5/Authorization/refresh-oauth-token', this.#session.base), {
      refresh_token: refreshToken,
    });
    return this.#remember(pairFromTokenResponse(body, this.#owner, sentAt, 'refresh-oauth-token'));
  }

  async #revoke(refreshToken: string): Promise<void> {
    this.#session.secrets.add(refreshToken);
    try {
      await postJson(this.#session.transport, 'revoke-oauth-token', new URL('v5/Authorization/revoke-oauth-token', this.#session.base), {
        refresh_token: refreshToken,
      });
    } catch (error) {
      // Already used, revoked or expired: it is unusable, which is what close() wants.
      if (!(error instanceof TesseraError && error.code === 'ERR_INVALID_TOKEN')) throw error;
    }
  }

  #remember(pair: StoredTokenPair): StoredTokenPair {
    this.#session.secrets.add(pair.token, pair.refreshToken);
    return pair;
  }

  /** Logging a client shows no secret. */
  toJSON(): Record<string, string> {
    return { baseUrl: this.baseUrl, apiLoginId: this.apiLoginId };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `TesseraClient { baseUrl: ${JSON.stringify(this.baseUrl)}, apiLoginId: ${JSON.stringify(this.apiLoginId)} }`;
  }
}
