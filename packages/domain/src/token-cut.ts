/**
 * What a cut — every access token of an account or of a credential issued before now is refused —
 * needs besides the time (docs/decisions/0011).
 */
export interface TokenCut {
  /**
   * The longest lifetime (exp − iat, seconds) among the tokens the log shows: a token issued before
   * the cut expires within it after the cut. From the events, never from the current configuration.
   */
  readonly longestTokenLifetime: number;
}

/**
 * When a cut made at `now` (epoch seconds) starts and stops mattering.
 *
 * `iat` has whole seconds, so a token issued earlier in this very second carries `iat = now`: the cut
 * refuses `iat < now + 1`. Issuers that know of the cut date later tokens at `notBefore` or after
 * (CredentialDirectory.tokensValidFrom), so a client that gets a new token in the same second keeps it.
 *
 * A refused token has `iat ≤ now`, so it expires by `now + its lifetime`: that is `rejectsUntil`.
 */
export function cutTimes(now: number, cut: TokenCut): { notBefore: number; rejectsUntil: number } {
  return { notBefore: now + 1, rejectsUntil: now + Math.max(0, cut.longestTokenLifetime) };
}
