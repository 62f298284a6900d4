import { TesseraError, type TesseraOperation } from './errors.js';

/**
 * A token pair as the client keeps it, and as a TokenLock stores it. Times are epoch
 * milliseconds on the local clock. `owner` (base URL and API Login ID, neither secret) keeps
 * a client from adopting a pair that belongs to another account.
 */
export interface StoredTokenPair {
  readonly owner: string;
  readonly token: string;
  readonly refreshToken: string;
  readonly obtainedAt: number;
  readonly expiresAt: number;
}

/** Anything the cache can hold: a v5 pair, or a v1 token with no refresh token. */
export interface CachedToken {
  readonly token: string;
  readonly obtainedAt: number;
  readonly expiresAt: number;
}

/**
 * A token is fresh until `expiresAt` minus the skew; the skew is capped at half the token's
 * life so that short-lived tokens are still cached rather than renewed on every call.
 */
export function isFresh(token: CachedToken, now: number, skewMs: number): boolean {
  const skew = Math.min(skewMs, (token.expiresAt - token.obtainedAt) / 2);
  return now < token.expiresAt - skew;
}

/**
 * Spec 2.2. The life is `expires − timestamp` (both the server's clock) counted from when
 * the request was sent (the local clock): a local clock that is off cannot make the client
 * use an expired token, nor renew on every call.
 */
export function pairFromTokenResponse(body: unknown, owner: string, sentAt: number, operation: TesseraOperation): StoredTokenPair {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const { token, refresh_token: refreshToken, timestamp, expires } = record;
  const life = typeof expires === 'string' && typeof timestamp === 'string' ? Date.parse(expires) - Date.parse(timestamp) : Number.NaN;
  if (typeof token !== 'string' || token === '' || typeof refreshToken !== 'string' || refreshToken === '' || !(life > 0)) {
    throw new TesseraError('ERR_UNEXPECTED_RESPONSE', `${operation}: the answer lacks token, refresh_token, timestamp or expires`, { operation, status: 200 });
  }
  return { owner, token, refreshToken, obtainedAt: sentAt, expiresAt: sentAt + life };
}

/** Spec 2.5: `expires_in_seconds` is the authoritative life, never a constant. */
export function tokenFromLegacyResponse(body: unknown, sentAt: number): CachedToken {
  const result = typeof body === 'object' && body !== null ? (body as { result?: unknown }).result : undefined;
  const record = typeof result === 'object' && result !== null ? (result as Record<string, unknown>) : {};
  const { authentication_token: token, expires_in_seconds: seconds } = record;
  if (typeof token !== 'string' || token === '' || typeof seconds !== 'number' || !(seconds > 0)) {
    throw new TesseraError('ERR_UNEXPECTED_RESPONSE', 'authenticate: the answer lacks result.authentication_token or result.expires_in_seconds', {
      operation: 'authenticate',
      status: 200,
    });
  }
  return { token, obtainedAt: sentAt, expiresAt: sentAt + seconds * 1000 };
}
