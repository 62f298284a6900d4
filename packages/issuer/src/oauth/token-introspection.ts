import { audiences, type IntrospectionResponse } from '@tessera/contracts';
import { familyScope, type CredentialDirectory } from '@tessera/domain';
import { familyOfRefreshToken, verifySignature, type PublicKeySet } from '@tessera/tokens';
import type { TokenService } from '../token-service.js';

export interface TokenLookupDeps {
  readonly tokens: Pick<TokenService, 'familyState' | 'isCurrentRefreshToken'>;
  readonly directory: Pick<CredentialDirectory, 'account' | 'tokensValidFrom' | 'isApiCredentialActive' | 'survivedDisables'>;
  readonly keys: PublicKeySet;
  /** The `iss` Tessera's tokens carry: TESSERA_ISSUER and the metadata's `issuer`. */
  readonly issuers: () => readonly string[];
  /** Epoch seconds. */
  readonly now: () => number;
  readonly clockSkewSeconds: number;
}

/** A token as introspection sees it: inactive, or what RFC 7662 says of an active one, with the client it was issued to. */
export type TokenLookup = { readonly active: false } | (IntrospectionResponse & { readonly active: true; readonly client_id: string });

const inactive = { active: false } as const;

/**
 * Whether a token of Tessera's is active now, and what it is (RFC 7662 section 2.2). Both kinds are
 * decided from the family's last event in this process's log, so the answer follows a refresh or a
 * revocation the moment it is durable: an access token is active while unexpired, its family not
 * revoked, its generation the family's current one, and no cut of its account or client covers it;
 * a refresh token while it is the family's current one, unexpired, and its credential still active.
 */
export async function lookUpToken(token: string, deps: TokenLookupDeps): Promise<TokenLookup> {
  return familyOfRefreshToken(token) === undefined ? lookUpAccessToken(token, deps) : lookUpRefreshToken(token, deps);
}

async function lookUpRefreshToken(refreshToken: string, deps: TokenLookupDeps): Promise<TokenLookup> {
  const familyId = familyOfRefreshToken(refreshToken)!;
  const state = await deps.tokens.familyState(familyId);
  if (state.status !== 'active' || !deps.tokens.isCurrentRefreshToken(state, refreshToken)) return inactive;
  const now = deps.now();
  if (now >= state.refreshExpiresAt || !deps.directory.isApiCredentialActive(state.apiLoginId, state.credentialId)) return inactive;
  if (!deps.directory.survivedDisables(state.accountId, state.issuedAt)) return inactive;
  return {
    active: true,
    token_type: 'refresh_token',
    client_id: state.apiLoginId,
    sub: state.accountId,
    scope: familyScope(deps.directory.account(state.accountId)?.permissions ?? [], state.requestedScope).join(' '),
    exp: state.refreshExpiresAt,
  };
}

async function lookUpAccessToken(token: string, deps: TokenLookupDeps): Promise<TokenLookup> {
  const now = deps.now();
  const signed = verifySignature(token, deps.keys, now);
  if (!signed.ok) return inactive;
  const { claims } = signed;
  // A family's token may carry an RFC 8707 audience of its account instead of tessera:v5.
  if (!deps.issuers().includes(claims.iss) || (claims.fid === undefined ? claims.aud !== audiences.v1 && claims.aud !== audiences.v5 : false)) return inactive;
  if (now >= claims.exp || claims.iat > now + deps.clockSkewSeconds) return inactive;
  if (deps.directory.tokensValidFrom(claims.sub, claims.client_id) > claims.iat) return inactive;
  if (claims.fid !== undefined) {
    const family = await deps.tokens.familyState(claims.fid);
    if (family.status !== 'active' || family.generation !== (claims.gen ?? 0)) return inactive;
  }
  return {
    active: true,
    // RFC 9449 section 6.2: a bound token is of the DPoP type, and its key's thumbprint is shown.
    token_type: claims.cnf === undefined ? 'Bearer' : 'DPoP',
    ...(claims.cnf === undefined ? {} : { cnf: { jkt: claims.cnf.jkt } }),
    client_id: claims.client_id,
    sub: claims.sub,
    scope: claims.scope,
    aud: claims.aud,
    iss: claims.iss,
    exp: claims.exp,
    iat: claims.iat,
    jti: claims.jti,
  };
}
