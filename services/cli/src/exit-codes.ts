import { errorCode, type ErrorCode } from '@tessera/contracts';

/**
 * The CLI's exit codes, for scripts (README, "Commands"), decided here alone from the error's code:
 * 0 done; 1 an unexpected failure (the store unreachable, a bug, a start that cannot happen, a log
 * no server has recorded its secret-hashing key on yet); 2 a usage error (a secret-hashing key the
 * log was not written with, too); 3 not found (the log's secret-hashing key among it); 4 over its
 * time budget (narrow the query); 5 account writes belong to another region, the control region
 * (docs/decisions/0018), which the message names.
 */
export const exitCodes = { done: 0, failure: 1, usage: 2, notFound: 3, overBudget: 4, notControlRegion: 5 } as const;

/**
 * The codes the CLI foresees, named here once: each has its exit code below, and the table maps no
 * other (a missing key and an extra key both fail to compile). Each must be an ErrorCode, so a code
 * renamed or removed in @tessera/contracts fails here instead of silently becoming exit 1.
 */
export const foreseenCodes = [
  'ERR_USAGE',
  'ERR_CONFIG',
  'ERR_LOG_HASHING_KEY_MISMATCH',
  'ERR_INVALID_ACCOUNT_INPUT',
  'ERR_INVALID_ADMIN_TOKEN_INPUT',
  'ERR_INVALID_AUDIT_QUERY',
  'ERR_NOT_FOUND',
  'ERR_NO_EVENT_STORE',
  'ERR_ACCOUNT_NOT_FOUND',
  'ERR_CREDENTIAL_NOT_FOUND',
  'ERR_SIGNING_KEY_NOT_FOUND',
  'ERR_ADMIN_TOKEN_NOT_FOUND',
  'ERR_FAMILY_NOT_FOUND',
  'ERR_LOG_HASHING_KEY_MISSING',
  'ERR_LOG_HASHING_KEY_UNRECORDED',
  'ERR_AUDIT_QUERY_OVER_BUDGET',
  'ERR_INVALID_SSF_RECEIVER_INPUT',
  'ERR_SSF_RECEIVER_NOT_FOUND',
  'ERR_ARCHIVE_BROKEN',
  'ERR_NOT_CONTROL_REGION',
  'ERR_CONTROL_REGION_UNCONFIRMED',
  'ERR_AUDIT_INDEX_BUSY',
] as const satisfies readonly ErrorCode[];

export type ForeseenCode = (typeof foreseenCodes)[number];

type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];

export const byErrorCode = {
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
  // Another process is filling the audit index: the message says to try again; a failure, not a usage error.
  ERR_AUDIT_INDEX_BUSY: exitCodes.failure,
} as const satisfies Record<ForeseenCode, ExitCode>;

function isForeseenCode(code: string): code is ForeseenCode {
  return Object.hasOwn(byErrorCode, code);
}

/** Whether the CLI foresaw this error: its message is written for the operator, and is the whole line. */
export function isForeseen(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && isForeseenCode(code);
}

/** How the process ends for an error: its code's exit code, or 1 for anything unforeseen. */
export function exitCodeFor(error: unknown): number {
  const code = errorCode(error);
  return code !== undefined && isForeseenCode(code) ? byErrorCode[code] : exitCodes.failure;
}
