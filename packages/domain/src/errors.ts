import { CodedError } from '@tessera/contracts';

/** Domain errors carry a stable code; only the HTTP layer maps codes to statuses. */
export type DomainErrorCode =
  | 'ERR_REFRESH_TOKEN_INVALID'
  | 'ERR_REFRESH_TOKEN_USED'
  | 'ERR_REFRESH_TOKEN_REVOKED'
  | 'ERR_REFRESH_TOKEN_EXPIRED'
  /** Away from home: the presented token cannot be proven the family's current one here (only the home region can tell). */
  | 'ERR_REFRESH_TOKEN_UNPROVEN'
  /** An OAuth 2.0 client presenting another client's refresh token. */
  | 'ERR_REFRESH_TOKEN_OTHER_CLIENT'
  /** An OAuth 2.0 refresh asking for a scope wider than the family's. */
  | 'ERR_INVALID_SCOPE'
  /** An OAuth 2.0 refresh naming a `resource` other than the family's audience (RFC 8707). */
  | 'ERR_INVALID_TARGET'
  /** A DPoP-bound refresh token (RFC 9449) presented without a proof of its key. */
  | 'ERR_DPOP_KEY_MISMATCH'
  /** Account writes belong to another region (the control region, named in the message). */
  | 'ERR_NOT_CONTROL_REGION'
  /** This region has not yet read what every other region said about the control region. */
  | 'ERR_CONTROL_REGION_UNCONFIRMED'
  | 'ERR_FAMILY_EXISTS'
  | 'ERR_ACCOUNT_EXISTS'
  | 'ERR_ACCOUNT_NOT_FOUND'
  | 'ERR_CREDENTIAL_NOT_FOUND'
  | 'ERR_SIGNING_KEY_NOT_FOUND'
  | 'ERR_FAMILY_NOT_FOUND'
  | 'ERR_ADMIN_TOKEN_NOT_FOUND'
  | 'ERR_ADMIN_TOKEN_EXISTS'
  | 'ERR_LOG_HASHING_KEY_MISMATCH'
  | 'ERR_LOG_HASHING_KEY_MISSING'
  | 'ERR_LOG_HASHING_KEY_UNRECORDED';

export class DomainError extends CodedError {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * The end of an exhaustive switch: the type checker proves it unreachable, so it carries no code
 * of its own (nothing can answer or script against it) and stays a plain Error.
 */
export function assertNever(value: never): never {
  // eslint-disable-next-line no-restricted-syntax -- can't happen: `never` proves every case handled; a code would name nothing a caller can meet.
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
