/** A mistake in how the command was called: printed as one line, exit code 2 (see exit-codes.ts). */
export class CliError extends Error {
  readonly code: string = 'ERR_USAGE';
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * What the command names does not exist: an account, an API Login ID or API ID, a signing key, or
 * Tessera's data itself in the folder given. Exit code 3, so a script tells it from a typo (2).
 */
export class NotFound extends CliError {
  override readonly code: string = 'ERR_NOT_FOUND';
  constructor(message: string) {
    super(message);
    this.name = 'NotFound';
  }
}
