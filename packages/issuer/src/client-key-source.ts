import { maxClientKeysBytes, validClientKeys } from '@tessera/accounts';
import type { ClientPublicJwk } from '@tessera/contracts';
import { EgressError, type EgressRequest, type EgressResponse } from '@tessera/egress';
import type { Clock } from '@tessera/timing';
import { IssuerRefusal } from './issuer-errors.js';

/**
 * The bounds of fetching a client's JWKS (`--jwks-url`; docs/decisions/0027). A fetch runs on the
 * request that needs the keys, so it is bounded in time; what it reads is bounded as keys on the
 * log are; and how often an assertion can make Tessera fetch is bounded per account.
 */
export const clientKeyFetchBounds = {
  /** The whole fetch, from the lookup to the last byte. */
  timeoutMs: 2000,
  /** The same bound as a JWKS given from a file (maxClientKeysBytes). */
  maxBytes: maxClientKeysBytes,
  /** Keys are kept this long when the answer names no max-age… */
  defaultMaxAgeSeconds: 300,
  /** …and a max-age is held within these: a server cannot make Tessera fetch on every request, nor keep keys past a day. */
  minMaxAgeSeconds: 60,
  maxMaxAgeSeconds: 86_400,
  /** An assertion naming a kid the keys lack fetches them again at most this often per account: a rotation is picked up, a stream of made-up kids is not a stream of fetches. */
  refetchIntervalSeconds: 60,
  /** When a fetch fails, keys that expired at most this long ago are used still: the client's server being down for a while does not lock the client out. */
  staleForSeconds: 3600,
  /** After a failed fetch, no other for this long for that account: requests meanwhile take the stale keys, or are refused, at once. */
  failurePauseSeconds: 10,
} as const;

/**
 * An assertion's kid names no key of the client: with keys from a URL, the client may have rotated
 * them, and one refetch may find the new key.
 */
export class UnknownClientKey extends IssuerRefusal {
  constructor() {
    super('ERR_INVALID_CLIENT', 'no key of the client has the assertion\'s kid');
  }
}

export interface ClientKeySourceDeps {
  /** The egress policy's fetch: the URL's host resolved, checked and connected to as checked. */
  readonly fetch: (url: string, request: EgressRequest) => Promise<EgressResponse>;
  readonly clock: Clock;
  readonly log: { warn(details: object, message: string): void };
}

export interface ClientKeys {
  readonly keys: readonly ClientPublicJwk[];
  /** Fetched for this very request (or by one it waited on): a refetch now would fetch the same. */
  readonly fetched: boolean;
}

export interface ClientKeySource {
  /** The account's keys at `uri`: from the cache while fresh, else fetched (one fetch per account at a time). */
  keysOf(accountId: string, uri: string): Promise<ClientKeys>;
  /** The keys fetched again after an unknown kid; undefined when the account's last refetch was under a minute ago. */
  refetch(accountId: string, uri: string): Promise<readonly ClientPublicJwk[] | undefined>;
}

interface CachedKeys {
  readonly uri: string;
  keys?: readonly ClientPublicJwk[];
  /** Epoch milliseconds. */
  expiresAt: number;
  inFlight?: Promise<readonly ClientPublicJwk[]> | undefined;
  lastRefetchAt?: number;
  failedAt?: number;
}

/** What the client sees of a failed fetch: that its keys could not be had, nothing of why or where. */
const unavailable = () => new IssuerRefusal('ERR_INVALID_CLIENT', 'the client\'s keys could not be fetched');

/**
 * Clients' keys fetched from the URLs their accounts registered, cached per account in this
 * process. One entry per account with a URL that presented an assertion; an entry whose account
 * moved to another URL (or to keys on the log) is replaced when next asked for.
 */
export function createClientKeySource(deps: ClientKeySourceDeps): ClientKeySource {
  const entries = new Map<string, CachedKeys>();
  const bounds = clientKeyFetchBounds;

  function entryOf(accountId: string, uri: string): CachedKeys {
    const entry = entries.get(accountId);
    if (entry?.uri === uri) return entry;
    const fresh: CachedKeys = { uri, expiresAt: 0 };
    entries.set(accountId, fresh);
    return fresh;
  }

  /** One fetch for the entry, shared by every request that waits on it; logged once when it fails. */
  function fetchInto(accountId: string, entry: CachedKeys): Promise<readonly ClientPublicJwk[]> {
    entry.inFlight ??= fetchKeys(entry.uri, deps.fetch).then(
      ({ keys, maxAgeSeconds }) => {
        entry.keys = keys;
        entry.expiresAt = deps.clock.now() + maxAgeSeconds * 1000;
        entry.failedAt = undefined;
        entry.inFlight = undefined;
        return keys;
      },
      (error: unknown) => {
        entry.failedAt = deps.clock.now();
        entry.inFlight = undefined;
        // The query may hold a token of the client's server: the log names the URL without it.
        deps.log.warn({ accountId, jwksUrl: withoutQuery(entry.uri), reason: error instanceof FetchRefusal || error instanceof EgressError ? error.message : 'unexpected' }, 'a client\'s JWKS could not be fetched');
        throw error;
      },
    );
    return entry.inFlight;
  }

  /** The entry's keys fetched, or, if that fails, its keys while they are at most staleForSeconds past expiry. */
  async function load(accountId: string, entry: CachedKeys): Promise<readonly ClientPublicJwk[]> {
    try {
      return await fetchInto(accountId, entry);
    } catch {
      const stale = usableStale(entry);
      if (stale) return stale;
      throw unavailable();
    }
  }

  function usableStale(entry: CachedKeys): readonly ClientPublicJwk[] | undefined {
    return entry.keys && deps.clock.now() < entry.expiresAt + bounds.staleForSeconds * 1000 ? entry.keys : undefined;
  }

  function pausedAfterFailure(entry: CachedKeys): boolean {
    return entry.failedAt !== undefined && deps.clock.now() < entry.failedAt + bounds.failurePauseSeconds * 1000;
  }

  return {
    async keysOf(accountId, uri) {
      const entry = entryOf(accountId, uri);
      if (entry.keys && deps.clock.now() < entry.expiresAt) return { keys: entry.keys, fetched: false };
      if (entry.inFlight === undefined && pausedAfterFailure(entry)) {
        const stale = usableStale(entry);
        if (stale) return { keys: stale, fetched: false };
        throw unavailable();
      }
      return { keys: await load(accountId, entry), fetched: true };
    },

    async refetch(accountId, uri) {
      const entry = entryOf(accountId, uri);
      const now = deps.clock.now();
      if (entry.lastRefetchAt !== undefined && now < entry.lastRefetchAt + bounds.refetchIntervalSeconds * 1000) return undefined;
      if (entry.inFlight === undefined && pausedAfterFailure(entry)) return undefined;
      entry.lastRefetchAt = now;
      return load(accountId, entry);
    },
  };
}

/**
 * RFC 7523 with keys at a URL: the check runs with the account's cached (or just fetched) keys; an
 * assertion whose kid they lack has them fetched again, once, within the refetch bound, and is
 * checked again. Nothing is spent by a check that stopped at the kid, so checking twice is safe.
 */
export async function checkWithKeysAt(source: ClientKeySource, accountId: string, uri: string, check: (keys: readonly ClientPublicJwk[]) => Promise<void>): Promise<void> {
  const { keys, fetched } = await source.keysOf(accountId, uri);
  try {
    await check(keys);
  } catch (error) {
    if (!(error instanceof UnknownClientKey) || fetched) throw error;
    const refetched = await source.refetch(accountId, uri);
    if (refetched === undefined) throw error;
    await check(refetched);
  }
}

/** A fetched answer that is not a JWKS Tessera takes: said in the operator's log only. */
class FetchRefusal extends Error {}

async function fetchKeys(uri: string, fetch: ClientKeySourceDeps['fetch']): Promise<{ keys: readonly ClientPublicJwk[]; maxAgeSeconds: number }> {
  const response = await fetch(uri, {
    maxBytes: clientKeyFetchBounds.maxBytes,
    timeoutMs: clientKeyFetchBounds.timeoutMs,
    headers: { accept: 'application/jwk-set+json, application/json' },
  });
  if (response.status !== 200) throw new FetchRefusal(`the answer was HTTP ${response.status}, not 200 (redirects are not followed)`);
  let jwks: unknown;
  try {
    jwks = JSON.parse(response.body.toString('utf8'));
  } catch {
    throw new FetchRefusal('the answer is not JSON');
  }
  try {
    // The same rules as keys given from a file: public keys only, distinct kids, at most 10.
    return { keys: validClientKeys(jwks).keys, maxAgeSeconds: maxAgeOf(response.headers['cache-control']) };
  } catch (error) {
    throw new FetchRefusal(`the answer is not a JWKS of public keys: ${error instanceof Error ? error.message : 'invalid'}`);
  }
}

/** Cache-Control's max-age (RFC 9111 section 5.2.2.1) held within the bounds; the default when it names none. */
export function maxAgeOf(cacheControl: string | undefined): number {
  const { defaultMaxAgeSeconds, minMaxAgeSeconds, maxMaxAgeSeconds } = clientKeyFetchBounds;
  const match = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?\s*(?:,|$)/i.exec(cacheControl ?? '');
  const seconds = match ? Number(match[1]) : defaultMaxAgeSeconds;
  return Math.min(maxMaxAgeSeconds, Math.max(minMaxAgeSeconds, seconds));
}

/** The URL without its query: what the operator's log may hold. */
export function withoutQuery(uri: string): string {
  const parsed = URL.canParse(uri) ? new URL(uri) : undefined;
  return parsed ? `${parsed.origin}${parsed.pathname}` : '(not a URL)';
}
