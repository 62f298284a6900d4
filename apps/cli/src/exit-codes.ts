/**
 * The CLI's exit codes, for scripts (README, "Commands"), decided here alone from the error's code:
 * 0 done; 1 an unexpected failure (the store unreachable, a bug, a start that cannot happen);
 * 2 a usage error; 3 not found.
 */
export const exitCodes = { done: 0, failure: 1, usage: 2, notFound: 3 } as const;

const byErrorCode: Readonly<Record<string, number>> = {
  ERR_USAGE: exitCodes.usage,
  ERR_CONFIG: exitCodes.usage,
  ERR_INVALID_ACCOUNT_INPUT: exitCodes.usage,
  ERR_INVALID_ADMIN_TOKEN_INPUT: exitCodes.usage,
  ERR_INVALID_AUDIT_QUERY: exitCodes.usage,
  ERR_NOT_FOUND: exitCodes.notFound,
  ERR_NO_EVENT_STORE: exitCodes.notFound,
  ERR_ACCOUNT_NOT_FOUND: exitCodes.notFound,
  ERR_CREDENTIAL_NOT_FOUND: exitCodes.notFound,
  ERR_SIGNING_KEY_NOT_FOUND: exitCodes.notFound,
  ERR_ADMIN_TOKEN_NOT_FOUND: exitCodes.notFound,
  ERR_FAMILY_NOT_FOUND: exitCodes.notFound,
  ERR_INVALID_SSF_RECEIVER_INPUT: exitCodes.usage,
  ERR_SSF_RECEIVER_NOT_FOUND: exitCodes.notFound,
};

/** The code an error carries, if it is one of Tessera's (or Node's) coded errors. */
export function errorCodeOf(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/** How the process ends for an error: its code's exit code, or 1 for anything unforeseen. */
export function exitCodeFor(error: unknown): number {
  const code = errorCodeOf(error);
  return code !== undefined && Object.hasOwn(byErrorCode, code) ? byErrorCode[code]! : exitCodes.failure;
}
