/**
 * The CLI's exit codes, for scripts (README, "Commands"): 0 done; 1 an unexpected failure (the
 * store unreachable, a bug); 2 a usage error; 3 not found.
 */
export const exitCodes = { usage: 2, notFound: 3 } as const;

/** A mistake in how the command was called: printed as one line, exit code 2. */
export class CliError extends Error {
  readonly exitCode: number = exitCodes.usage;
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
  override readonly exitCode: number = exitCodes.notFound;
  constructor(message: string) {
    super(message);
    this.name = 'NotFound';
  }
}
