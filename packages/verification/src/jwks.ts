import type { PublicKeySet } from '@tessera/tokens';
import { systemClock } from '@tessera/timing';

interface Jwks {
  keys?: { kid?: unknown; kty?: unknown; crv?: unknown; x?: unknown; y?: unknown }[];
}

/**
 * Loads an issuer's `/.well-known/jwks.json` into a key set: how a verifier outside the issuer's
 * process learns the signing keys (with `createKeyRefresh`, again when a token names a new kid).
 * Only P-256 keys are taken, the one algorithm Tessera signs with.
 */
export async function loadJwks(url: string, keys: PublicKeySet, options: { timeoutMs?: number; now?: () => number } = {}): Promise<void> {
  const answer = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs ?? 5_000) });
  if (!answer.ok) throw new Error(`could not load the issuer's JWKS from ${url}: HTTP ${answer.status}`);
  const jwks = (await answer.json()) as Jwks;
  const at = Math.floor((options.now ?? systemClock.now)() / 1000);
  for (const key of jwks.keys ?? []) {
    const { kid, kty, crv, x, y } = key;
    if (typeof kid === 'string' && kty === 'EC' && crv === 'P-256' && typeof x === 'string' && typeof y === 'string') {
      keys.apply({ type: 'SigningKeyPublished', v: 1, kid, alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', x, y }, at });
    }
  }
}
