import { audiences, type AccessTokenClaims, type TokenInterface } from '@tessera/contracts';
import {
  SpentProofIds,
  VerifiedTokenCache,
  checkClaims,
  checkDpopProof,
  type PublicKeySet,
  type SignatureVerification,
  type TokenRejection,
} from '@tessera/tokens';
import type { CutCandidate } from './revocation-projection.js';

/**
 * Why a request's token was refused with a 401:
 * - `ERR_TOKEN_MISSING`: neither a `Bearer` nor a `DPoP` token;
 * - a TokenRejection, or `ERR_TOKEN_REVOKED`: the token itself;
 * - `ERR_TOKEN_DPOP_BOUND`: a DPoP-bound token (`cnf.jkt`) presented as a bearer token (RFC 9449 section 7.2);
 * - `ERR_TOKEN_NOT_DPOP_BOUND`: the `DPoP` scheme with a token bound to no key;
 * - `ERR_DPOP_PROOF_INVALID`: the `DPoP` header is missing, repeated or invalid, spent before, or signed by another key than the token's.
 */
export type AccessRefusalCode = TokenRejection | 'ERR_TOKEN_MISSING' | 'ERR_TOKEN_REVOKED' | 'ERR_TOKEN_DPOP_BOUND' | 'ERR_TOKEN_NOT_DPOP_BOUND' | 'ERR_DPOP_PROOF_INVALID';

/**
 * Decides whether a bearer or DPoP-bound token may do an operation, in the design's order: header
 * → signature (allowed algorithm, known kid) → typ, iss, aud, exp → revocation projection → the
 * DPoP binding → permission. Everything it needs is in memory, so a decision costs one signature
 * check (two with a DPoP proof).
 */
export type AccessDecision =
  | { readonly status: 200; readonly claims: AccessTokenClaims }
  | {
      readonly status: 401;
      readonly code: AccessRefusalCode;
      readonly detail: string;
      /** Set when the request presented the `DPoP` scheme: its challenge is then a DPoP one (RFC 9449 section 7.1). */
      readonly scheme?: 'DPoP';
    }
  | {
      readonly status: 403;
      readonly code: 'ERR_PERMISSION_DENIED';
      readonly detail: string;
      readonly claims: AccessTokenClaims;
      /** The permission the token lacked, for the insufficient_scope challenge. */
      readonly scope: string;
      /** Set when the request presented the `DPoP` scheme. */
      readonly scheme?: 'DPoP';
    };

/**
 * The request as the client sent it, which a DPoP proof is checked against (RFC 9449 section
 * 4.3): needed only for the `DPoP` scheme. A decision for `Authorization: DPoP …` without it is
 * refused, since no proof can be checked.
 */
export interface PresentedRequest {
  /** The method, as the client sent it (upper case). */
  readonly method: string;
  /** The absolute URL the client addressed (scheme, host, port, path); the query is ignored. */
  readonly url: string;
  /** The `DPoP` header(s) as received: exactly one proof is taken. */
  readonly dpop?: string | readonly string[] | undefined;
}

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
  /** Tolerance for another host's clock, for a token's `iat`/`nbf` and a DPoP proof's `iat` (default 60). */
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

const dpop = /^dpop +([^\s]+) *$/i;

/**
 * Whether the header presents the `DPoP` scheme (case-insensitively, then a space): for a caller
 * that builds the PresentedRequest only when a decision needs it, as the plugin does.
 */
export function hasDpopScheme(authorization: string): boolean {
  return authorization.length > 5 && authorization.charCodeAt(4) === space && authorization.slice(0, 4).toLowerCase() === 'dpop';
}

const details: Record<Exclude<AccessRefusalCode, 'ERR_DPOP_PROOF_INVALID'>, string> = {
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
  ERR_TOKEN_DPOP_BOUND: 'the access token is bound to a DPoP key: present it with the DPoP scheme and a DPoP proof',
  ERR_TOKEN_NOT_DPOP_BOUND: 'the access token is not bound to a DPoP key: present it with the Bearer scheme',
};

const missing = { status: 401, code: 'ERR_TOKEN_MISSING', detail: details.ERR_TOKEN_MISSING } as const;

/** A DPoP request's token and what its proof is checked against, for the checks after the signature. */
interface DpopPresentation {
  readonly token: string;
  readonly request: PresentedRequest | undefined;
}

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
  const clockSkewSeconds = deps.clockSkewSeconds ?? 60;
  /** This verifier's spent proofs: a proof replayed at another instance (another replica) is not seen there. */
  const spentProofIds = new SpentProofIds({ clockSkewSeconds });
  function decide(authorization: string | undefined, requirement: AccessRequirement, request?: PresentedRequest): AccessDecision {
    if (authorization === undefined) return missing;
    if (!hasBearerScheme(authorization)) return hasDpopScheme(authorization) ? decideDpop(authorization, requirement, request) : missing;
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
    return decideClaims(signed.claims, requirement, nowSeconds, undefined);
  }

  /** `Authorization: DPoP <token>`: the token as a bearer token is checked, then its proof (RFC 9449 section 7.1). */
  function decideDpop(authorization: string, requirement: AccessRequirement, request: PresentedRequest | undefined): AccessDecision {
    const token = dpop.exec(authorization)?.[1];
    if (!token) return { status: 401, code: 'ERR_TOKEN_MALFORMED', detail: details.ERR_TOKEN_MALFORMED, scheme: 'DPoP' };
    const nowSeconds = deps.now();
    const signed = verified.verify(token, nowSeconds);
    if (!signed.ok) return { status: 401, code: signed.code, detail: details[signed.code], scheme: 'DPoP' };
    return decideClaims(signed.claims, requirement, nowSeconds, { token, request });
  }

  /** After the signature: the claims, the revocations, the DPoP binding (both ways), the permission. */
  function decideClaims(claims: AccessTokenClaims, requirement: AccessRequirement, nowSeconds: number, presented: DpopPresentation | undefined): AccessDecision {
    const checked = checkClaims(claims, {
      issuer: typeof deps.issuer === 'function' ? deps.issuer() : deps.issuer,
      audience: requirement.audience ?? audiences[requirement.interface],
      nowSeconds,
      clockSkewSeconds: deps.clockSkewSeconds,
    });
    if (!checked.ok) return refused(checked.code, details[checked.code], presented !== undefined);
    const { projection } = deps;
    if (
      (claims.fid !== undefined && projection.isRejected(claims.fid, claims.gen ?? 0)) ||
      projection.isCutOff?.({ accountId: claims.sub, clientId: claims.client_id, issuedAt: claims.iat }) === true
    ) {
      return refused('ERR_TOKEN_REVOKED', details.ERR_TOKEN_REVOKED, presented !== undefined);
    }
    if (presented === undefined) {
      // RFC 9449 section 7.2: a bound token is no bearer token; taken as one, a stolen token would work without its key.
      if (claims.cnf !== undefined) return { status: 401, code: 'ERR_TOKEN_DPOP_BOUND', detail: details.ERR_TOKEN_DPOP_BOUND };
    } else {
      const proofRefusal = checkBinding(claims, nowSeconds, presented);
      if (proofRefusal !== undefined) return proofRefusal;
    }
    if (requirement.permission !== undefined && !scopeIncludes(claims.scope, requirement.permission)) {
      const detail = `the account is not permitted to ${requirement.permission}`;
      return presented === undefined
        ? { status: 403, code: 'ERR_PERMISSION_DENIED', detail, claims, scope: requirement.permission }
        : { status: 403, code: 'ERR_PERMISSION_DENIED', detail, claims, scope: requirement.permission, scheme: 'DPoP' };
    }
    return { status: 200, claims };
  }

  /** RFC 9449 section 7.1: one proof, for this request and this token, signed by the key the token is bound to, never seen before. */
  function checkBinding(claims: AccessTokenClaims, nowSeconds: number, { token, request }: DpopPresentation): AccessDecision | undefined {
    if (claims.cnf === undefined) return refused('ERR_TOKEN_NOT_DPOP_BOUND', details.ERR_TOKEN_NOT_DPOP_BOUND, true);
    if (request === undefined) return invalidProof('the request\'s method and URL are not known here, so no DPoP proof can be checked');
    const proof = oneProof(request.dpop);
    if (proof === undefined) return invalidProof('a DPoP request needs exactly one DPoP header with one proof');
    const result = checkDpopProof(proof, { method: request.method, url: request.url, now: nowSeconds, clockSkewSeconds, accessToken: token, spentIds: spentProofIds });
    if (!result.ok) return invalidProof(result.description);
    if (result.jkt !== claims.cnf.jkt) return invalidProof('the DPoP proof is not signed by the key the access token is bound to');
    return undefined;
  }

  return {
    /** From what is in memory now. */
    decide,
    /** decide(), but a token signed by an unknown key gets one refresh of the keys first. */
    async check(authorization: string | undefined, requirement: AccessRequirement, request?: PresentedRequest): Promise<AccessDecision> {
      const decision = decide(authorization, requirement, request);
      return needsKeyRefresh(decision) ? refreshThenDecide(authorization, requirement, request) : decision;
    },
    /** Whether check() would refresh the keys for this decision: a caller that decided synchronously goes on with refreshThenDecide(). */
    needsKeyRefresh,
    refreshThenDecide,
  };
  function needsKeyRefresh(decision: AccessDecision): boolean {
    return decision.status === 401 && decision.code === 'ERR_TOKEN_UNKNOWN_KEY' && deps.refreshKeys !== undefined;
  }
  /** One refresh of the keys (a new kid may have been published), then the decision again. */
  async function refreshThenDecide(authorization: string | undefined, requirement: AccessRequirement, request?: PresentedRequest): Promise<AccessDecision> {
    await deps.refreshKeys?.();
    return decide(authorization, requirement, request);
  }
}

/** A 401, with the scheme the request used: a DPoP request gets a DPoP challenge. */
function refused(code: AccessRefusalCode, detail: string, dpopScheme: boolean): AccessDecision {
  return !dpopScheme ? { status: 401, code, detail } : { status: 401, code, detail, scheme: 'DPoP' };
}

/** Names which check failed, never the proof or the token. */
function invalidProof(detail: string): AccessDecision {
  return { status: 401, code: 'ERR_DPOP_PROOF_INVALID', detail, scheme: 'DPoP' };
}

/**
 * The one proof of a request. Node joins repeated headers it does not know with ", ", which no
 * compact JWS holds, so "several" shows either as an array or as a comma.
 */
function oneProof(header: string | readonly string[] | undefined): string | undefined {
  const proof = typeof header === 'string' ? header : header?.length === 1 ? header[0] : undefined;
  return proof === undefined || proof === '' || proof.includes(',') ? undefined : proof;
}

export type BearerVerifier = ReturnType<typeof createBearerVerifier>;
