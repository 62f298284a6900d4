import { CodedError } from '@tessera/contracts';
import type { PublicKeySet } from '@tessera/tokens';
import { systemClock } from '@tessera/timing';
import { z } from 'zod';

/** The issuer's answer: a key set whose keys are checked one by one, so a key of another kind is passed over, not fatal. */
const KeySetAnswer = z.object({ keys: z.array(z.unknown()).nullish() });
/** The keys taken: P-256 public keys with an id. */
const P256Key = z.object({ kid: z.string(), kty: z.literal('EC'), crv: z.literal('P-256'), x: z.string(), y: z.string() });

/** The issuer's key set could not be loaded (an HTTP error, or an answer that is no key set): the keys known stay as they were. */
export class JwksUnavailable extends CodedError {
  readonly code = 'ERR_JWKS_UNAVAILABLE';
}

/**
 * Loads an issuer's `/.well-known/jwks.json` into a key set: how a verifier outside the issuer's
 * process learns the signing keys (with `createKeyRefresh`, again when a token names a new kid).
 * Only P-256 keys are taken, the one algorithm Tessera signs with.
 */
export async function loadJwks(url: string, keys: PublicKeySet, options: { timeoutMs?: number; now?: () => number } = {}): Promise<void> {
  const answer = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs ?? 5_000) });
  if (!answer.ok) throw new JwksUnavailable(`could not load the issuer's JWKS from ${url}: HTTP ${answer.status}`);
  const jwks = KeySetAnswer.safeParse(await answer.json());
  if (!jwks.success) throw new JwksUnavailable(`the issuer's JWKS from ${url} is not a key set (an object listing keys)`, { cause: jwks.error });
  const at = Math.floor((options.now ?? systemClock.now)() / 1000);
  for (const listed of jwks.data.keys ?? []) {
    const key = P256Key.safeParse(listed);
    if (!key.success) continue;
    const { kid, x, y } = key.data;
    keys.apply({ type: 'SigningKeyPublished', v: 1, kid, alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', x, y }, at });
  }
}
