import { authorizedFetch, resolveUrl, type TesseraFetchInit } from './authorized-fetch.js';
import { TesseraError } from './errors.js';
import { SecretSet } from './secret-set.js';
import { TokenCache } from './token-cache.js';
import { tokenFromLegacyResponse, type CachedToken } from './token-pair.js';
import { baseOf, postForm, type FetchLike, type Transport } from './transport.js';

export interface LegacyTesseraClientOptions {
  /** `{legacy_base_url}` of the older interface, https. */
  readonly legacyBaseUrl: string;
  readonly apiId: string;
  /** Secret. Sent only to authenticate. */
  readonly apiKey: string;
  /** Re-authenticate this long before the token's life runs out (capped at half of it). Default 60. */
  readonly refreshSkewSeconds?: number;
  readonly fetch?: FetchLike;
  readonly requestTimeoutMs?: number;
  readonly clock?: () => number;
}

/**
 * The older interface (spec 4.5, 4.6): one token, no refresh token. The token is cached for
 * the `expires_in_seconds` the server returned (spec 2.5), never a constant, and at most one
 * authenticate request is in flight per client. There is nothing to share between processes
 * (each may hold its own token), so there is no lock.
 */
export class LegacyTesseraClient {
  readonly legacyBaseUrl: string;
  readonly apiId: string;
  readonly #base: URL;
  readonly #apiKey: string;
  readonly #clock: () => number;
  readonly #secrets: SecretSet;
  readonly #transport: Transport;
  readonly #cache: TokenCache<CachedToken>;
  #closed = false;

  constructor(options: LegacyTesseraClientOptions) {
    this.#base = baseOf(options.legacyBaseUrl, 'legacyBaseUrl');
    if (!options.apiId) throw new TypeError('apiId is required');
    if (!options.apiKey) throw new TypeError('apiKey is required');
    this.legacyBaseUrl = options.legacyBaseUrl;
    this.apiId = options.apiId;
    this.#apiKey = options.apiKey;
    this.#clock = options.clock ?? Date.now;
    this.#secrets = new SecretSet([options.apiKey]);
    this.#transport = {
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      timeoutMs: options.requestTimeoutMs ?? 10_000,
      secrets: () => this.#secrets.values(),
    };
    this.#cache = new TokenCache(() => this.#authenticate(), this.#clock, (options.refreshSkewSeconds ?? 60) * 1000);
  }

  async getAccessToken(): Promise<string> {
    this.#assertOpen();
    return (await this.#cache.get()).token;
  }

  /** fetch with `Authorization: bearer <token>` and the spec 4.6 headers; the same 401 retry as TesseraClient.fetch. */
  async fetch(input: string | URL, init: TesseraFetchInit = {}): Promise<Response> {
    this.#assertOpen();
    return authorizedFetch(this.#transport, this.#cache, 'bearer', resolveUrl(input, this.#base), init, {
      'content-type': 'application/json',
      'cache-control': 'no-cache',
    });
  }

  /** Forgets the token. The older interface has no revoke operation. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#cache.settle();
    this.#cache.clear();
  }

  async #authenticate(): Promise<CachedToken> {
    const sentAt = this.#clock();
    const body = await postForm(this.#transport, 'authenticate', new URL('v1/authenticate', this.#base), { apiid: this.apiId, apikey: this.#apiKey });
    const token = tokenFromLegacyResponse(body, sentAt);
    this.#secrets.add(token.token);
    return token;
  }

  #assertOpen(): void {
    if (this.#closed) throw new TesseraError('ERR_CLIENT_CLOSED', 'the client was closed', { operation: 'fetch' });
  }

  toJSON(): Record<string, string> {
    return { legacyBaseUrl: this.legacyBaseUrl, apiId: this.apiId };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `LegacyTesseraClient { legacyBaseUrl: ${JSON.stringify(this.legacyBaseUrl)}, apiId: ${JSON.stringify(this.apiId)} }`;
  }
}
