import { authorizedFetch, resolveUrl, type TesseraFetchInit } from './authorized-fetch.js';
import { InvalidOptionError, TesseraError } from './errors.js';
import { SecretSet } from './secret-set.js';
import { TokenCache } from './token-cache.js';
import type { CachedToken } from './token-pair.js';
import { baseOf, type FetchLike, type Transport } from './transport.js';
import { systemTime } from './system-time.js';

/** The options both clients take beside their address and credentials. */
export interface SessionOptions {
  readonly refreshSkewSeconds?: number;
  readonly fetch?: FetchLike;
  readonly requestTimeoutMs?: number;
  readonly clock?: () => number;
}

/** An option's name and its value: the name is for the error message when the value is unusable. */
export type NamedOption = readonly [option: string, value: string];

/**
 * A client's base address and credentials, each with the name of its option (`baseUrl`,
 * `apiLoginId`, `transactionKey` for v5). Both credentials are required; the secret is redacted
 * from every message.
 */
export type Credentials = readonly [address: NamedOption, identifier: NamedOption, secret: NamedOption];

/**
 * What TesseraClient and LegacyTesseraClient share: the https base address, the clock, the
 * secrets every error message is redacted with, the transport, the single-flight token
 * cache, and whether the client was closed. The clients differ only in how they get a token
 * and what closing means.
 */
export class ClientSession<T extends CachedToken> {
  readonly base: URL;
  readonly clock: () => number;
  readonly secrets: SecretSet;
  readonly transport: Transport;
  readonly cache: TokenCache<T>;
  /** The validated identifier and secret. */
  readonly identifier: string;
  readonly secret: string;
  #closed = false;

  /** `renew` obtains a new token; `rejected` is the token a server just refused, if any. */
  constructor(options: SessionOptions, [address, identifier, secret]: Credentials, renew: (rejected: string | undefined) => Promise<T>) {
    this.base = baseOf(address[1], address[0]);
    for (const [option, value] of [identifier, secret]) if (!value) throw new InvalidOptionError(`${option} is required`);
    this.identifier = identifier[1];
    this.secret = secret[1];
    this.clock = options.clock ?? systemTime;
    this.secrets = new SecretSet([this.secret]);
    this.transport = {
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      timeoutMs: options.requestTimeoutMs ?? 10_000,
      secrets: () => this.secrets.values(),
    };
    this.cache = new TokenCache(renew, this.clock, (options.refreshSkewSeconds ?? 60) * 1000);
  }

  get closed(): boolean {
    return this.#closed;
  }

  async accessToken(): Promise<string> {
    this.#assertOpen();
    return (await this.cache.get()).token;
  }

  fetch(scheme: string, input: string | URL, init: TesseraFetchInit, defaultHeaders?: Record<string, string>): Promise<Response> {
    this.#assertOpen();
    return authorizedFetch(this.transport, this.cache, scheme, resolveUrl(input, this.base), init, defaultHeaders);
  }

  /** Refuses further work, waits for a renewal in flight, forgets the token and returns the one it held. */
  async close(): Promise<T | undefined> {
    this.#closed = true;
    await this.cache.settle();
    const remembered = this.cache.current;
    this.cache.clear();
    return remembered;
  }

  #assertOpen(): void {
    if (this.#closed) throw new TesseraError('ERR_CLIENT_CLOSED', 'the client was closed', { operation: 'fetch' });
  }
}
