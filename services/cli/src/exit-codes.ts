/**
 * The CLI's exit codes, for scripts (README, "Commands"), decided here alone from the error's code:
 * 0 done; 1 an unexpected failure (the store unreachable, a bug, a start that cannot happen, a log
 * no server has recorded its secret-hashing key on yet); 2 a usage error (a secret-hashing key the
 * log was not written with, too); 3 not found (the log's secret-hashing key among it); 4 over its
 * time budget (narrow the query); 5 account writes belong to another region, the control region
 * (docs/decisions/0018), which the message names.
 */
export const exitCodes = { done: 0, failure: 1, usage: 2, notFound: 3, overBudget: 4, notControlRegion: 5 } as const;

const byErrorCode: Readonly<Record<string, number>> = {
  ERR_USAGE: exitCodes.usage,
  ERR_CONFIG: exitCodes.usage,
  ERR_LOG_HASHING_KEY_MISMATCH: exitCodes.usage,
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
  ERR_LOG_HASHING_KEY_MISSING: exitCodes.notFound,
  ERR_LOG_HASHING_KEY_UNRECORDED: exitCodes.failure,
  ERR_AUDIT_QUERY_OVER_BUDGET: exitCodes.overBudget,
  ERR_INVALID_SSF_RECEIVER_INPUT: exitCodes.usage,
  ERR_SSF_RECEIVER_NOT_FOUND: exitCodes.notFound,
  ERR_ARCHIVE_BROKEN: exitCodes.failure,
  ERR_NOT_CONTROL_REGION: exitCodes.notControlRegion,
  // Another region's account topic could not be read: whether this one may write is unknown, so it does not.
  ERR_CONTROL_REGION_UNCONFIRMED: exitCodes.failure,
};

/** Whether the CLI foresaw this error: its message is written for the operator, and is the whole line. */
export function isForeseen(error: unknown): boolean {
  const code = errorCodeOf(error);
  return code !== undefined && Object.hasOwn(byErrorCode, code);
}

/** The code an error carries, if it is one of Tessera's (or Node's) coded errors. */
export function errorCodeOf(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/** How the process ends for an error: its code's exit code, or 1 for anything unforeseen. */
export function exitCodeFor(error: unknown): number {
  const code = errorCodeOf(error);
  return code !== undefined && Object.hasOwn(byErrorCode, code) ? byErrorCode[code]! : exitCodes.failure;
}
