/**
 * Every code a Tessera error carries, declared once. Users script against these (CONTRACT.md lists
 * the HTTP problem types and the CLI exit codes they lead to), so a code is renamed here or nowhere:
 * every error class's `code` is typed by this list, and the HTTP problem table and the CLI's exit
 * codes are records over subsets of it, so a renamed or removed code fails to compile where it is
 * mapped. A runtime list, not only a type, so a code that crossed a thread as a string can be checked.
 *
 * Not here: the client SDK's codes (`TesseraErrorCode` in @tessera/client, published with no
 * dependency at all), and the verifier's refusal decisions (`ERR_TOKEN_…`), which are answers, not throws.
 */
export const errorCodes = [
  // The domain's refusals (DomainError).
  'ERR_REFRESH_TOKEN_INVALID',
  'ERR_REFRESH_TOKEN_USED',
  'ERR_REFRESH_TOKEN_REVOKED',
  'ERR_REFRESH_TOKEN_EXPIRED',
  'ERR_REFRESH_TOKEN_UNPROVEN',
  'ERR_NOT_CONTROL_REGION',
  'ERR_CONTROL_REGION_UNCONFIRMED',
  'ERR_FAMILY_EXISTS',
  'ERR_ACCOUNT_EXISTS',
  'ERR_ACCOUNT_NOT_FOUND',
  'ERR_CREDENTIAL_NOT_FOUND',
  'ERR_SIGNING_KEY_NOT_FOUND',
  'ERR_FAMILY_NOT_FOUND',
  'ERR_ADMIN_TOKEN_NOT_FOUND',
  'ERR_ADMIN_TOKEN_EXISTS',
  'ERR_LOG_HASHING_KEY_MISMATCH',
  'ERR_LOG_HASHING_KEY_MISSING',
  'ERR_LOG_HASHING_KEY_UNRECORDED',
  // The issuer's refusals and outages.
  'ERR_INVALID_CLIENT',
  'ERR_REFRESH_TOKEN_REUSED',
  'ERR_CREDENTIAL_REVOKED',
  'ERR_INVALID_SCOPE',
  'ERR_INVALID_TARGET',
  'ERR_REFRESH_TOKEN_OTHER_CLIENT',
  'ERR_OAUTH_REQUEST_INVALID',
  'ERR_OAUTH_TOKEN_TYPE_UNSUPPORTED',
  'ERR_DPOP_PROOF_INVALID',
  'ERR_DPOP_NONCE_REQUIRED',
  'ERR_DPOP_KEY_MISMATCH',
  'ERR_SIGNING_KEY_UNAVAILABLE',
  'ERR_SECRET_HASHING_KEY_UNAVAILABLE',
  'ERR_SECRET_HASHING_KEY_MISMATCH',
  'ERR_SIGNING_KEY_FILE_INVALID',
  'ERR_JWKS_UNAVAILABLE',
  // Input the caller gave that a service cannot take.
  'ERR_INVALID_ACCOUNT_INPUT',
  'ERR_INVALID_ADMIN_TOKEN_INPUT',
  'ERR_INVALID_AUDIT_QUERY',
  'ERR_FORBIDDEN_BODY_FIELD',
  // The event store.
  'ERR_EVENT_STORE_UNAVAILABLE',
  'ERR_READ_MODEL_CATCHING_UP',
  'ERR_EXPECTED_REVISION_CONFLICT',
  'ERR_EVENT_STORE_READ_ONLY',
  'ERR_INVALID_EVENT',
  'ERR_NO_EVENT_STORE',
  'ERR_POSITION_HOLDS_ANOTHER_STREAM',
  'ERR_SUBSCRIBER_FAILED',
  // Audit, archive and archiving.
  'ERR_AUDIT_QUERY_OVER_BUDGET',
  'ERR_AUDIT_INDEX_BEHIND',
  'ERR_AUDIT_INDEX_BUSY',
  'ERR_AUDIT_THREAD_FAILED',
  'ERR_ARCHIVE_UNTRUSTED',
  'ERR_ARCHIVE_BROKEN',
  'ERR_ARCHIVE_MANIFEST_MISSING',
  'ERR_ARCHIVE_READ_INTERRUPTED',
  'ERR_ARCHIVE_SEGMENT_UNVERIFIED',
  'ERR_INVALID_PIN_FILE',
  'ERR_KEPT_STREAM_REMOVAL',
  // The Shared Signals transmitter.
  'ERR_SSF_STREAM_NOT_FOUND',
  'ERR_SSF_STREAM_EXISTS',
  'ERR_SSF_RECEIVER_NOT_FOUND',
  'ERR_SSF_RECEIVER_EXISTS',
  'ERR_INVALID_SSF_REQUEST',
  'ERR_INVALID_SSF_RECEIVER_INPUT',
  'ERR_SSF_CHECKPOINTS_CORRUPT',
  'ERR_SSF_STREAM_LIMIT',
  'ERR_SSF_VERIFICATION_TOO_SOON',
  'ERR_SSF_SUBJECT_OUT_OF_SCOPE',
  'ERR_SSF_POLL_IN_FLIGHT',
  'ERR_SSF_EMPTY_POLL_TOO_SOON',
  'ERR_SSF_DELIVERY_HOLDER_UNAVAILABLE',
  // The revocation feed and the relay.
  'ERR_FEED_UNAVAILABLE',
  'ERR_FEED_PUBLISH_REJECTED',
  'ERR_FEED_MESSAGE_INVALID',
  'ERR_FEED_HANDLER_FAILED',
  'ERR_FEED_CLOSED',
  'ERR_RELAY_CHECKPOINT_CORRUPT',
  // Starting, configuring and calling the command line.
  'ERR_CONFIG',
  'ERR_START_FAILED',
  'ERR_THREAD_EXITED',
  'ERR_USAGE',
  'ERR_NOT_FOUND',
  // A bug, not a condition: a function called with what it says it does not take, or a state the
  // code's own logic rules out. Always a 500 and a CLI exit 1.
  'ERR_INVALID_ARGUMENT',
  'ERR_INVARIANT_BROKEN',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

const known: ReadonlySet<string> = new Set(errorCodes);

export function isErrorCode(code: string): code is ErrorCode {
  return known.has(code);
}

/**
 * The root of Tessera's errors: each subclass names its `code`, a literal of ErrorCode
 * (`readonly code = 'ERR_…'`), or takes one of a closed subset in its constructor.
 */
export abstract class CodedError extends Error {
  abstract readonly code: ErrorCode;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A function called with what it says it does not take: the caller's bug, answered 500. */
export class InvalidArgument extends CodedError {
  readonly code = 'ERR_INVALID_ARGUMENT';
}

/** A state the code's own logic rules out (a reply to another question, a record without its position). */
export class InvariantBroken extends CodedError {
  readonly code = 'ERR_INVARIANT_BROKEN';
}

/**
 * The one reader of an error's code: the `code` a thrown value carries, if it is a string. Node's
 * system errors (`ENOENT`, `EADDRINUSE`), its argument errors (`ERR_PARSE_ARGS_…`), SQLite's
 * (`SQLITE_BUSY`) and Tessera's own (ErrorCode) all name their cause there. Read by shape, not by
 * class, because a `catch` gets `unknown` and a code may have crossed a thread.
 */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/** The code of one of Tessera's own errors, or undefined for anything else (Node's, a driver's, none). */
export function tesseraErrorCode(error: unknown): ErrorCode | undefined {
  const code = errorCode(error);
  return code !== undefined && isErrorCode(code) ? code : undefined;
}
