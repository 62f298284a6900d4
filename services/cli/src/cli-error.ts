import { CodedError } from '@tessera/contracts';

/** A mistake in how the command was called: printed as one line, exit code 2 (see exit-codes.ts). */
export class CliError extends CodedError {
  readonly code: 'ERR_USAGE' | 'ERR_NOT_FOUND' = 'ERR_USAGE';
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * The audit index is being filled by another process (a server rebuilding it after a start): the
 * command reads nothing half-built, and the operator tries again in a few seconds. Exit code 1.
 */
export class AuditIndexBusy extends CodedError {
  readonly code = 'ERR_AUDIT_INDEX_BUSY';
}

/**
 * What the command names does not exist: an account, an API Login ID or API ID, a signing key, or
 * Tessera's data itself in the folder given. Exit code 3, so a script tells it from a typo (2).
 */
export class NotFound extends CliError {
  override readonly code = 'ERR_NOT_FOUND';
  constructor(message: string) {
    super(message);
    this.name = 'NotFound';
  }
}
