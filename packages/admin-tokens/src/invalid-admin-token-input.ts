import { CodedError } from '@tessera/contracts';

/** A value the caller gave that no admin token may have: the caller's mistake (CLI exit 2), not a state of a token. */
export class InvalidAdminTokenInput extends CodedError {
  readonly code = 'ERR_INVALID_ADMIN_TOKEN_INPUT';
  constructor(
    /** Which input: the CLI names its flag after it. */
    readonly field: 'name' | 'scope' | 'expires-in' | 'admin-token',
    message: string,
  ) {
    super(message);
    this.name = 'InvalidAdminTokenInput';
  }
}
