import type { TokenCache } from './token-cache.js';
import type { CachedToken } from './token-pair.js';
import { send, type Transport } from './transport.js';
import { InvalidOptionError } from './errors.js';

export interface TesseraFetchInit extends RequestInit {
  /**
   * Retry a POST or PATCH once after a 401 too. Off by default: the first attempt may have
   * had an effect. GET, HEAD, OPTIONS, PUT and DELETE are retried without asking.
   */
  readonly retryNonIdempotent?: boolean;
}

const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * A request with the bearer token. On a 401 the token is renewed once and the request sent
 * once more, when the method allows it and the body can be sent twice; the second answer is
 * returned whatever it is. Every answer other than that 401 (403, 429, 5xx included) is
 * returned as the Response, as fetch does; only a failure to get an answer throws (NetworkError).
 */
export async function authorizedFetch<T extends CachedToken>(
  transport: Transport,
  cache: TokenCache<T>,
  scheme: string,
  url: URL,
  init: TesseraFetchInit,
  defaultHeaders: Record<string, string> = {},
): Promise<Response> {
  const { retryNonIdempotent = false, ...requestInit } = init;
  const method = (requestInit.method ?? 'GET').toUpperCase();
  const attempt = (token: string) => {
    const headers = new Headers(requestInit.headers);
    for (const [name, value] of Object.entries(defaultHeaders)) if (!headers.has(name)) headers.set(name, value);
    headers.set('authorization', `${scheme} ${token}`);
    return send(transport, 'fetch', url, { ...requestInit, headers });
  };
  const { token } = await cache.get();
  const first = await attempt(token);
  if (first.status !== 401) return first;
  if (!(idempotentMethods.has(method) || retryNonIdempotent) || !canSendTwice(requestInit.body)) return first;
  await first.body?.cancel().catch(() => undefined);
  const renewed = await cache.renew(token);
  return attempt(renewed.token);
}

/** A stream body is consumed by the first attempt; every other body kind can be sent again. */
function canSendTwice(body: RequestInit['body']): boolean {
  return !(typeof ReadableStream !== 'undefined' && body instanceof ReadableStream);
}

/** `client.fetch('/v5/…')` resolves against the base URL; an absolute URL must be https. */
export function resolveUrl(input: string | URL, base: URL): URL {
  const url = new URL(input, base);
  if (url.protocol !== 'https:') throw new InvalidOptionError('client.fetch sends a bearer token over https only: the service answers over HTTPS only');
  return url;
}
