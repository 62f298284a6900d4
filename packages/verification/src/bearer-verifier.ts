import { audiences, type AccessTokenClaims, type TokenInterface } from '@tessera/contracts';
import { VerifiedTokenCache, checkClaims, type PublicKeySet, type SignatureVerification, type TokenRejection } from '@tessera/tokens';
import type { CutCandidate } from './revocation-projection.js';

/**
 * Decides whether a bearer token may do an operation, in the design's order: header →
 * signature (allowed algorithm, known kid) → typ, iss, aud, exp → revocation projection →
 * permission. Everything it needs is in memory, so a decision costs one signature check.
 */
export type AccessDecision =
  | { readonly status: 200; readonly claims: AccessTokenClaims }
  | { readonly status: 401; readonly code: TokenRejection | 'ERR_TOKEN_MISSING' | 'ERR_TOKEN_REVOKED'; readonly detail: string }
  | {
      readonly status: 403;
      readonly code: 'ERR_PERMISSION_DENIED';
      readonly detail: string;
      readonly claims: AccessTokenClaims;
      /** The permission the token lacked, for the insufficient_scope challenge. */
      readonly scope: string;
    };

export interface AccessRequirement {
  readonly interface: TokenInterface;
  /** A scope the token must carry; omit when any valid token will do. */
  readonly permission?: string;
  /**
   * The audience this service is (an RFC 8707 resource an account may ask tokens for). Omit to
   * accept only the interface's default audience, so a token minted for a resource is refused
   * where that resource was not configured.
   */
  readonly audience?: string;
}

/** The projection as the verifier sees it: fed from the log in-process, or from Kafka elsewhere. */
export interface RevocationCheck {
  isRejected(familyId: string, generation: number): boolean;
  /**
   * Cuts by account and by credential. Optional, so that a check written before them
   * still compiles; such a check knows only families and lets a cut-off token through.
   */
  isCutOff?(token: CutCandidate): boolean;
}

export interface BearerVerifierDeps {
  readonly keys: PublicKeySet;
  readonly projection: RevocationCheck;
  /**
   * The `iss` accepted: Tessera's TESSERA_ISSUER, and its public URL when tokens from its OAuth 2.0
   * endpoints are accepted too. A function is asked at each decision, for an issuer known only once
   * a listener has bound its port.
   */
  readonly issuer: string | readonly string[] | (() => string | readonly string[]);
  /** Epoch seconds. */
  readonly now: () => number;
  readonly clockSkewSeconds?: number;
  /** Looks for new signing keys when a token names an unknown kid (see key-refresh.ts). */
  readonly refreshKeys?: () => Promise<void>;
}

const bearer = /^bearer +([^\s]+) *$/i;

/**
 * The scheme alone, case-insensitively: "Bearer" then a space or the end. A request with another
 * scheme (or none) carries no bearer credentials at all (RFC 6750 3.1). Compared by character
 * code rather than by a second regular expression: it runs on every protected request.
 */
const bearerLower = 'bearer';
function hasBearerScheme(authorization: string): boolean {
  if (authorization.length < 6) return false;
  for (let i = 0; i < 6; i += 1) if ((authorization.charCodeAt(i) | 0x20) !== bearerLower.charCodeAt(i)) return false;
  return authorization.length === 6 || authorization.charCodeAt(6) === 0x20;
}

const details: Record<TokenRejection | 'ERR_TOKEN_MISSING' | 'ERR_TOKEN_REVOKED', string> = {
  ERR_TOKEN_MISSING: 'an Authorization: Bearer token is required',
  ERR_TOKEN_MALFORMED: 'the access token is malformed',
  ERR_TOKEN_ALGORITHM: 'the access token is invalid',
  ERR_TOKEN_UNKNOWN_KEY: 'the access token is invalid',
  ERR_TOKEN_SIGNATURE: 'the access token is invalid',
  ERR_TOKEN_TYPE: 'the access token is invalid',
  ERR_TOKEN_ISSUER: 'the access token is invalid',
  ERR_TOKEN_AUDIENCE: 'the access token is not valid for this interface',
  ERR_TOKEN_EXPIRED: 'the access token has expired',
  ERR_TOKEN_NOT_YET_VALID: 'the access token is not valid yet',
  ERR_TOKEN_REVOKED: 'the access token was revoked or replaced by a refresh',
};

/**
 * Whether the space-separated scope names the permission as one of its words: what
 * `scope.split(' ').includes(permission)` answers, without building the array on every request.
 */
function scopeIncludes(scope: string, permission: string): boolean {
  if (permission.length === 0 || permission.includes(' ')) return scope.split(' ').includes(permission);
  for (let at = scope.indexOf(permission); at !== -1; at = scope.indexOf(permission, at + 1)) {
    const end = at + permission.length;
    if ((at === 0 || scope.charCodeAt(at - 1) === space) && (end === scope.length || scope.charCodeAt(end) === space)) return true;
  }
  return false;
}
const space = 0x20;

export function createBearerVerifier(deps: BearerVerifierDeps) {
  const verified = new VerifiedTokenCache(deps.keys);
  function decide(authorization: string | undefined, requirement: AccessRequirement): AccessDecision {
    if (authorization === undefined || !hasBearerScheme(authorization)) return { status: 401, code: 'ERR_TOKEN_MISSING', detail: details.ERR_TOKEN_MISSING };
    const nowSeconds = deps.now();
    // The common header, "Bearer <token>" with one space, whose token was verified before: a
    // cached token holds no whitespace, so an exact hit is the token the expression below
    // would take, without scanning its ~600 characters.
    let signed: SignatureVerification | undefined = authorization.charCodeAt(7) === space ? undefined : verified.cached(authorization.slice(7), nowSeconds);
    if (signed === undefined) {
      const token = bearer.exec(authorization)?.[1];
      if (!token) return { status: 401, code: 'ERR_TOKEN_MALFORMED', detail: details.ERR_TOKEN_MALFORMED };
      signed = verified.verify(token, nowSeconds);
    }
    if (!signed.ok) return { status: 401, code: signed.code, detail: details[signed.code] };
    const checked = checkClaims(signed.claims, {
      issuer: typeof deps.issuer === 'function' ? deps.issuer() : deps.issuer,
      audience: requirement.audience ?? audiences[requirement.interface],
      nowSeconds,
      clockSkewSeconds: deps.clockSkewSeconds,
    });
    if (!checked.ok) return { status: 401, code: checked.code, detail: details[checked.code] };
    const { claims } = checked;
    const { projection } = deps;
    if (
      (claims.fid !== undefined && projection.isRejected(claims.fid, claims.gen ?? 0)) ||
      projection.isCutOff?.({ accountId: claims.sub, clientId: claims.client_id, issuedAt: claims.iat }) === true
    ) {
      return { status: 401, code: 'ERR_TOKEN_REVOKED', detail: details.ERR_TOKEN_REVOKED };
    }
    if (requirement.permission !== undefined && !scopeIncludes(claims.scope, requirement.permission)) {
      return { status: 403, code: 'ERR_PERMISSION_DENIED', detail: `the account is not permitted to ${requirement.permission}`, claims, scope: requirement.permission };
    }
    return { status: 200, claims };
  }
  return {
    /** From what is in memory now. */
    decide,
    /** decide(), but a token signed by an unknown key gets one refresh of the keys first. */
    async check(authorization: string | undefined, requirement: AccessRequirement): Promise<AccessDecision> {
      const decision = decide(authorization, requirement);
      return needsKeyRefresh(decision) ? refreshThenDecide(authorization, requirement) : decision;
    },
    /** Whether check() would refresh the keys for this decision: a caller that decided synchronously goes on with refreshThenDecide(). */
    needsKeyRefresh,
    refreshThenDecide,
  };
  function needsKeyRefresh(decision: AccessDecision): boolean {
    return decision.status === 401 && decision.code === 'ERR_TOKEN_UNKNOWN_KEY' && deps.refreshKeys !== undefined;
  }
  /** One refresh of the keys (a new kid may have been published), then the decision again. */
  async function refreshThenDecide(authorization: string | undefined, requirement: AccessRequirement): Promise<AccessDecision> {
    await deps.refreshKeys?.();
    return decide(authorization, requirement);
  }
}

export type BearerVerifier = ReturnType<typeof createBearerVerifier>;
