/**
 * Errors with stable codes: callers switch on `error.code`, never on the message. Messages
 * are built from the status, the problem title and type, and the operation's name — never
 * from a request or response body, and every message passes through `redact` with the
 * client's secrets before it is set, so no key or token can end up in a log line.
 */
export type TesseraErrorCode =
  | 'ERR_INVALID_CREDENTIALS'
  | 'ERR_RATE_LIMITED'
  | 'ERR_NETWORK'
  | 'ERR_SERVER'
  | 'ERR_BAD_REQUEST'
  | 'ERR_FORBIDDEN'
  | 'ERR_INVALID_TOKEN'
  | 'ERR_UNEXPECTED_RESPONSE'
  | 'ERR_LOCK_TIMEOUT'
  | 'ERR_UNSAFE_TOKEN_FILE'
  | 'ERR_CLIENT_CLOSED';

/** The token operation that failed; `fetch` for a request made through `client.fetch`. */
export type TesseraOperation = 'get-oauth-token' | 'refresh-oauth-token' | 'revoke-oauth-token' | 'authenticate' | 'fetch' | 'lock';

export interface TesseraErrorDetails {
  readonly operation: TesseraOperation;
  readonly status?: number;
  /** The problem+json `type` of the server's answer, when it sent one. */
  readonly problemType?: string;
  readonly cause?: unknown;
}

export class TesseraError extends Error {
  override readonly name: string = 'TesseraError';
  readonly code: TesseraErrorCode;
  readonly operation: TesseraOperation;
  readonly status: number | undefined;
  readonly problemType: string | undefined;

  constructor(code: TesseraErrorCode, message: string, details: TesseraErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.operation = details.operation;
    this.status = details.status;
    this.problemType = details.problemType;
  }
}

/** 401 from get-oauth-token or authenticate: the API Login ID / Transaction Key (or API ID / Key) were refused. */
export class InvalidCredentialsError extends TesseraError {
  override readonly name = 'InvalidCredentialsError';
  constructor(message: string, details: TesseraErrorDetails) {
    super('ERR_INVALID_CREDENTIALS', message, details);
  }
}

/** 429. `retryAfterSeconds` comes from the Retry-After header when the server sent one. */
export class RateLimitedError extends TesseraError {
  override readonly name = 'RateLimitedError';
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, details: TesseraErrorDetails & { retryAfterSeconds?: number }) {
    super('ERR_RATE_LIMITED', message, details);
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** The request never got an HTTP answer: refused connection, TLS failure, DNS, timeout. */
export class NetworkError extends TesseraError {
  override readonly name = 'NetworkError';
  readonly timedOut: boolean;
  constructor(message: string, details: TesseraErrorDetails & { timedOut?: boolean }) {
    super('ERR_NETWORK', message, details);
    this.timedOut = details.timedOut ?? false;
  }
}

/** 5xx. A 503 while the server's projections catch up carries `retryAfterSeconds`. */
export class ServerError extends TesseraError {
  override readonly name = 'ServerError';
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, details: TesseraErrorDetails & { retryAfterSeconds?: number }) {
    super('ERR_SERVER', message, details);
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** 400, 413 or 415: the request itself was malformed (a bug in the caller or in this client). */
export class BadRequestError extends TesseraError {
  override readonly name = 'BadRequestError';
  constructor(message: string, details: TesseraErrorDetails) {
    super('ERR_BAD_REQUEST', message, details);
  }
}

/**
 * 403 from a token operation. A 403 from a protected resource reached through
 * `client.fetch` is not thrown: it is returned as the Response, like every non-401 answer.
 */
export class ForbiddenError extends TesseraError {
  override readonly name = 'ForbiddenError';
  constructor(message: string, details: TesseraErrorDetails) {
    super('ERR_FORBIDDEN', message, details);
  }
}

/**
 * FileTokenLock refused a directory, lock file or state file that someone other than this
 * user could have placed or changed: owned by another uid, writable (or, for the directory,
 * usable at all) by group or others, a symbolic link, or not a regular file. The file is
 * never read. `path` names it and `reason` says which check failed; neither is secret.
 */
export class UnsafeTokenFileError extends TesseraError {
  override readonly name = 'UnsafeTokenFileError';
  readonly path: string;
  readonly reason: string;
  constructor(path: string, reason: string) {
    super('ERR_UNSAFE_TOKEN_FILE', `refusing ${path}: ${reason}`, { operation: 'lock' });
    this.path = path;
    this.reason = reason;
  }
}

/**
 * A client option that cannot work: a missing API Login ID or key, a base URL that is not an
 * absolute https URL, or a `client.fetch` to plain http. Thrown at once, before any request, by the
 * constructor or `client.fetch`: a mistake in the calling code, so a TypeError as it always was,
 * with a stable code besides.
 */
export class InvalidOptionError extends TypeError {
  override readonly name = 'InvalidOptionError';
  readonly code = 'ERR_INVALID_OPTION';
}

/** Replaces every occurrence of each (non-empty) secret in `text`: a mangled message beats a leaked key. */
export function redact(text: string, secrets: Iterable<string | undefined>): string {
  let result = text;
  for (const secret of secrets) {
    if (secret) result = result.split(secret).join('[redacted]');
  }
  return result;
}
