import type { TesseraFetchInit } from './authorized-fetch.js';
import { ClientSession } from './client-session.js';
import { tokenFromLegacyResponse, type CachedToken } from './token-pair.js';
import { postForm, type FetchLike } from './transport.js';

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
 * The older interface (/v1/authenticate, protected v1 requests): one token, no refresh token. The token is cached for
 * the `expires_in_seconds` the server returned, never a constant, and at most one
 * authenticate request is in flight per client. There is nothing to share between processes
 * (each may hold its own token), so there is no lock.
 */
export class LegacyTesseraClient {
  readonly legacyBaseUrl: string;
  readonly apiId: string;
  readonly #apiKey: string;
  readonly #session: ClientSession<CachedToken>;

  constructor(options: LegacyTesseraClientOptions) {
    const credentials = [['legacyBaseUrl', options.legacyBaseUrl], ['apiId', options.apiId], ['apiKey', options.apiKey]] as const;
    this.#session = new ClientSession(options, credentials, () => this.#authenticate());
    [this.legacyBaseUrl, this.apiId, this.#apiKey] = [options.legacyBaseUrl, this.#session.identifier, this.#session.secret];
  }

  async getAccessToken(): Promise<string> {
    return this.#session.accessToken();
  }

  /** fetch with `Authorization: bearer <token>` and the headers the older interface asks for; the same 401 retry as TesseraClient.fetch. */
  async fetch(input: string | URL, init: TesseraFetchInit = {}): Promise<Response> {
    return this.#session.fetch('bearer', input, init, {
      'content-type': 'application/json',
      'cache-control': 'no-cache',
    });
  }

  /** Forgets the token. The older interface has no revoke operation. */
  async close(): Promise<void> {
    await this.#session.close();
  }

  async #authenticate(): Promise<CachedToken> {
    const session = this.#session;
    const sentAt = session.clock();
    const body = await postForm(session.transport, 'authenticate', new URL('v1/authenticate', session.base), { apiid: this.apiId, apikey: this.#apiKey });
    const token = tokenFromLegacyResponse(body, sentAt);
    session.secrets.add(token.token);
    return token;
  }

  toJSON(): Record<string, string> {
    return { legacyBaseUrl: this.legacyBaseUrl, apiId: this.apiId };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `LegacyTesseraClient { legacyBaseUrl: ${JSON.stringify(this.legacyBaseUrl)}, apiId: ${JSON.stringify(this.apiId)} }`;
  }
}
