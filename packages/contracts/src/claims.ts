/** The audiences that keep the two interfaces apart: a token of one is refused by the other. */
export const audiences = {
  v5: 'tessera:v5',
  v1: 'tessera:v1',
} as const;
export type TokenInterface = keyof typeof audiences;

/** RFC 9068 access token claims plus Tessera's family bookkeeping. */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  client_id: string;
  iat: number;
  exp: number;
  jti: string;
  scope: string;
  /** Not before (epoch seconds). Tessera does not set it; a verifier honours it when present (RFC 7519 4.1.5). */
  nbf?: number;
  /** Family id: one get-oauth-token exchange and every refresh after it. Absent on v1 tokens. */
  fid?: string;
  /** Generation within the family. Absent on v1 tokens. */
  gen?: number;
  /**
   * RFC 9449 section 6.1: the token is DPoP-bound to the key with this RFC 7638 thumbprint. It is
   * taken only with the scheme `DPoP` and a proof signed by that key, never as a Bearer token.
   */
  cnf?: { jkt: string };
}
