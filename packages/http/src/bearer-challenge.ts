/**
 * RFC 6750 section 3 `WWW-Authenticate` values for a bearer-protected resource:
 * - no bearer credentials at all (no header, or another scheme): `Bearer`, with no error code (3.1);
 * - a bad, expired or revoked token: `Bearer error="invalid_token"`;
 * - a valid token without the permission: `Bearer error="insufficient_scope", scope="…"`.
 * Endpoints that take credentials in the body (get-oauth-token, /v1/authenticate, refresh,
 * revoke) are not bearer-protected and send none of these.
 */
export type BearerChallenge =
  | { readonly error?: undefined }
  | { readonly error: 'invalid_token' }
  | { readonly error: 'insufficient_scope'; readonly scope: string };

export function bearerChallenge(challenge: BearerChallenge): string {
  switch (challenge.error) {
    case undefined:
      return 'Bearer';
    case 'invalid_token':
      return 'Bearer error="invalid_token"';
    case 'insufficient_scope':
      return `Bearer error="insufficient_scope", scope=${quoted(challenge.scope)}`;
  }
}

/**
 * RFC 9449 section 7.1 `WWW-Authenticate` values for a DPoP-bound token's request: the RFC 6750
 * error codes (none when the request carried no credentials), `invalid_dpop_proof` for a proof
 * that failed, and always `algs`, the proof algorithms the resource server takes.
 */
export type DpopChallenge =
  | { readonly error?: undefined }
  | { readonly error: 'invalid_token' | 'invalid_dpop_proof'; readonly description: string }
  | { readonly error: 'insufficient_scope'; readonly scope: string };

export function dpopChallenge(challenge: DpopChallenge, algs: readonly string[]): string {
  const accepted = `algs=${quoted(algs.join(' '))}`;
  switch (challenge.error) {
    case undefined:
      return `DPoP ${accepted}`;
    case 'invalid_token':
    case 'invalid_dpop_proof':
      return `DPoP error="${challenge.error}", error_description=${quoted(challenge.description)}, ${accepted}`;
    case 'insufficient_scope':
      return `DPoP error="insufficient_scope", scope=${quoted(challenge.scope)}, ${accepted}`;
  }
}

/** An RFC 9110 quoted-string: a scope named by a route's author is still escaped, never trusted. */
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (character) => `\\${character}`).replace(/[^\t\x20-\x7e]/g, '')}"`;
}
