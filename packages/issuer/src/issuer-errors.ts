import { CodedError } from '@tessera/contracts';

/** Why the issuer refused a request. All of them are 401 at the HTTP layer (docs/interface.md, Errors). */
export type IssuerRefusalCode =
  | 'ERR_INVALID_CLIENT'
  | 'ERR_REFRESH_TOKEN_INVALID'
  | 'ERR_REFRESH_TOKEN_USED'
  /** A used refresh token presented again, which revoked its family (TESSERA_REFRESH_REUSE=revoke-family). */
  | 'ERR_REFRESH_TOKEN_REUSED'
  | 'ERR_REFRESH_TOKEN_REVOKED'
  | 'ERR_REFRESH_TOKEN_EXPIRED'
  | 'ERR_CREDENTIAL_REVOKED'
  /** An OAuth 2.0 `scope` naming a permission the account does not have (or the family was not made for). */
  | 'ERR_INVALID_SCOPE'
  /** An RFC 8707 `resource` that is not one of the account's audiences (or, on a refresh, not the family's). */
  | 'ERR_INVALID_TARGET'
  /** An OAuth 2.0 client presenting a refresh token issued to another client. */
  | 'ERR_REFRESH_TOKEN_OTHER_CLIENT'
  /** A DPoP-bound refresh token (RFC 9449) without a proof of its key. */
  | 'ERR_DPOP_KEY_MISMATCH';

export class IssuerRefusal extends CodedError {
  constructor(
    readonly code: IssuerRefusalCode,
    message: string,
  ) {
    super(message);
    this.name = 'IssuerRefusal';
  }
}

/**
 * What every refresh and revoke refusal says, whatever its code. The family id is public (the
 * `fid` claim of any access token), so a message that told a revoked family from an active or an
 * unknown one would answer questions about families to anyone guessing secrets. The code, which
 * only the log sees, keeps the cause.
 */
export const refreshRefusalMessage = 'the refresh token is not valid (unknown, expired, already used or revoked): get a new pair with get-oauth-token';

export const refreshRefusal = (code: Exclude<IssuerRefusalCode, 'ERR_INVALID_CLIENT' | 'ERR_INVALID_SCOPE' | 'ERR_INVALID_TARGET' | 'ERR_DPOP_KEY_MISMATCH'>) => new IssuerRefusal(code, refreshRefusalMessage);

/**
 * The issuer has no key it can sign with: its key was retired elsewhere and the replacement is
 * not published yet, or the store would not take it. Not the client's fault and not a bug: the
 * HTTP layer answers 503 with Retry-After.
 */
export class SigningKeyUnavailable extends CodedError {
  readonly code = 'ERR_SIGNING_KEY_UNAVAILABLE';
  constructor(message = 'no signing key: the issuer is not ready') {
    super(message);
    this.name = 'SigningKeyUnavailable';
  }
}
