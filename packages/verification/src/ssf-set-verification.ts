import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { JwksUnavailable } from './jwks.js';
import { createKeyRefresh } from './key-refresh.js';

/** RFC 8935 section 2.4's codes, which RFC 8936's `setErrs` reuses: what a receiver tells the transmitter about a SET it did not take. */
export type SetErrorCode = 'invalid_request' | 'invalid_key' | 'invalid_issuer' | 'invalid_audience' | 'authentication_failed' | 'access_denied';

export type SetVerification = { readonly ok: true; readonly claims: JWTPayload } | { readonly ok: false; readonly err: SetErrorCode; readonly description: string };

export interface SetVerifierOptions {
  /** The transmitter's `jwks_uri`. */
  readonly jwksUri: string;
  /** The transmitter's `issuer`: every SET's `iss`. */
  readonly issuer: string;
  readonly fetch: typeof fetch;
  /** At most one JWKS load per this many milliseconds when SETs name a `kid` not known yet. */
  readonly keyRefreshCooldownMs: number;
}

export interface SetVerifier {
  /** Checks one SET against the transmitter's keys, `typ: secevent+jwt`, ES256, `iss` and the stream's `aud`. */
  verify(token: string, audience: string): Promise<SetVerification>;
  /** Loads the JWKS (at start; a refresh for an unknown `kid` happens by itself). */
  load(): Promise<void>;
}

/**
 * SET verification (RFC 8417 section 4, RFC 8935 section 2.2). A `kid` not in the key set loads
 * the JWKS again before the SET is refused, through createKeyRefresh: anyone can POST a SET with
 * any `kid` to a push endpoint, so the loads are single-flight and at most one per cooldown.
 */
export function createSetVerifier(options: SetVerifierOptions): SetVerifier {
  let keys = createLocalJWKSet({ keys: [] });
  async function load(): Promise<void> {
    const answer = await options.fetch(options.jwksUri, { signal: AbortSignal.timeout(5_000) });
    if (!answer.ok) throw new JwksUnavailable(`the transmitter's JWKS at ${options.jwksUri} answered HTTP ${answer.status}`);
    // Checked by createLocalJWKSet, which throws on anything that is not a key set.
    keys = createLocalJWKSet((await answer.json()) as JSONWebKeySet);
  }
  const refresh = createKeyRefresh(load, { cooldownMs: options.keyRefreshCooldownMs });

  async function verifyOnce(token: string, audience: string): Promise<SetVerification> {
    try {
      const { payload } = await jwtVerify(token, keys, { issuer: options.issuer, audience, typ: 'secevent+jwt', algorithms: ['ES256'], requiredClaims: ['jti', 'iat'] });
      return { ok: true, claims: payload };
    } catch (error) {
      return refusal(error);
    }
  }

  return {
    load,
    async verify(token, audience) {
      const first = await verifyOnce(token, audience);
      if (first.ok || first.err !== 'invalid_key') return first;
      await refresh();
      return verifyOnce(token, audience);
    },
  };
}

function refusal(error: unknown): SetVerification {
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return { ok: false, err: 'invalid_key', description: 'the SET is signed with a key the transmitter does not publish' };
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return { ok: false, err: 'invalid_issuer', description: 'the SET is not from this transmitter' };
    if (error.claim === 'aud') return { ok: false, err: 'invalid_audience', description: "the SET's aud is not this stream's" };
    return { ok: false, err: 'invalid_request', description: `the SET's ${error.claim} claim is not acceptable` };
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return { ok: false, err: 'invalid_request', description: 'the SET signature does not verify' };
  if (error instanceof errors.JOSEError) return { ok: false, err: 'invalid_request', description: `the SET is not a valid secevent+jwt (${error.code})` };
  throw error;
}

/** What a receiver did with one SET: applied and persisted (acknowledged, or answered 202), or refused with a code. */
export type SetOutcome = { readonly applied: true } | { readonly applied: false; readonly err: SetErrorCode; readonly description: string };
