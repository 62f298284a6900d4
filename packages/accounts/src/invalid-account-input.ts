import { CodedError } from '@tessera/contracts';

/** A value the caller gave that no account may have: the caller's mistake (CLI exit 2, HTTP 400), not a state of the account. */
export class InvalidAccountInput extends CodedError {
  readonly code = 'ERR_INVALID_ACCOUNT_INPUT';
  constructor(
    /** Which input: the CLI names its flag after it. */
    readonly field: 'name' | 'permission' | 'account' | 'audience' | 'client-keys',
    message: string,
  ) {
    super(message);
    this.name = 'InvalidAccountInput';
  }
}
