import { errorCode, type ErrorCode, type Problem } from '@tessera/contracts';
import { problemTypes } from './problem.js';

/** The `error` values of RFC 6749 section 5.2, RFC 7009 section 2.2.1 and RFC 8707 that Tessera answers. */
export type OAuthErrorName =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'unsupported_token_type'
  | 'temporarily_unavailable'
  | 'server_error'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce';

/** How a code is answered on the OAuth 2.0 endpoints, whose errors are RFC 6749 JSON rather than problem+json. */
export interface OAuthAnswer {
  readonly status: number;
  readonly error: OAuthErrorName;
  /** A fixed `error_description`; without one the problem's fixed detail, else the error's own message. */
  readonly description?: string;
}

/** How one error code is answered over HTTP. */
export interface ProblemRule {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  /** A fixed detail; without one the error's own message is the detail (it was written for the client). */
  readonly detail?: string;
  readonly retryAfterSeconds?: number;
  /** Logged once per answer at this level, with the code: refusals at info, outages at warn. */
  readonly log: { readonly level: 'info' | 'warn'; readonly message: string };
  /**
   * The answer on the OAuth 2.0 endpoints. Without one, a 503 is a `temporarily_unavailable` and
   * anything else a 500 `server_error` there: a code those endpoints never throw.
   */
  readonly oauth?: OAuthAnswer;
}

/** The store is probed with backoff capped at 5 s; a client that waits 2 s usually finds it back. */
const outageRetryAfterSeconds = 2;

const tokenRefused = { status: 401, type: problemTypes.invalidToken, title: 'Unauthorized', log: { level: 'info', message: 'token request refused' } } as const;
const notFound = { status: 404, type: problemTypes.notFound, title: 'Not Found', log: { level: 'info', message: 'request refused: not found' } } as const;
const invalid = { status: 400, type: problemTypes.badRequest, title: 'Bad Request', log: { level: 'info', message: 'request refused: invalid input' } } as const;
/** RFC 6749 section 5.2: every refused refresh token gets one description, as on the v5 routes (the family id is public). */
const refreshRefused = { status: 400, error: 'invalid_grant', description: 'the refresh token is not valid (unknown, expired, already used, revoked, or issued to another client)' } as const;
const refreshTokenRefused = { ...tokenRefused, oauth: refreshRefused } as const;
/** An OAuth 2.0 request the protocol refuses: a 400 with the error's own message. */
const oauthInvalid = (error: OAuthErrorName) => ({ ...invalid, log: { level: 'info', message: 'OAuth 2.0 request refused' }, oauth: { status: 400, error } }) as const;

/**
 * The codes answered other than 500, named here once: the table below must map each of them and
 * no other (a missing key and an extra key both fail to compile), and each must be an ErrorCode, so
 * a code renamed or removed in @tessera/contracts fails here instead of turning into a 500.
 */
export const problemCodes = [
  'ERR_EVENT_STORE_UNAVAILABLE',
  'ERR_READ_MODEL_CATCHING_UP',
  'ERR_SIGNING_KEY_UNAVAILABLE',
  'ERR_SECRET_HASHING_KEY_UNAVAILABLE',
  'ERR_INVALID_CLIENT',
  'ERR_CREDENTIAL_REVOKED',
  'ERR_REFRESH_TOKEN_INVALID',
  'ERR_REFRESH_TOKEN_USED',
  'ERR_REFRESH_TOKEN_REUSED',
  'ERR_REFRESH_TOKEN_REVOKED',
  'ERR_REFRESH_TOKEN_EXPIRED',
  'ERR_REFRESH_TOKEN_UNPROVEN',
  'ERR_REFRESH_TOKEN_OTHER_CLIENT',
  'ERR_INVALID_SCOPE',
  'ERR_INVALID_TARGET',
  'ERR_OAUTH_REQUEST_INVALID',
  'ERR_OAUTH_TOKEN_TYPE_UNSUPPORTED',
  'ERR_DPOP_PROOF_INVALID',
  'ERR_DPOP_NONCE_REQUIRED',
  'ERR_DPOP_KEY_MISMATCH',
  'ERR_NOT_CONTROL_REGION',
  'ERR_CONTROL_REGION_UNCONFIRMED',
  'ERR_EXPECTED_REVISION_CONFLICT',
  'ERR_FAMILY_NOT_FOUND',
  'ERR_ACCOUNT_NOT_FOUND',
  'ERR_ADMIN_TOKEN_NOT_FOUND',
  'ERR_CREDENTIAL_NOT_FOUND',
  'ERR_INVALID_ACCOUNT_INPUT',
  'ERR_INVALID_AUDIT_QUERY',
  'ERR_FORBIDDEN_BODY_FIELD',
  'ERR_AUDIT_QUERY_OVER_BUDGET',
  'ERR_ARCHIVE_UNTRUSTED',
  'ERR_SSF_STREAM_NOT_FOUND',
  'ERR_SSF_RECEIVER_NOT_FOUND',
  'ERR_INVALID_SSF_REQUEST',
  'ERR_INVALID_SSF_RECEIVER_INPUT',
  'ERR_SSF_STREAM_LIMIT',
  'ERR_SSF_VERIFICATION_TOO_SOON',
  'ERR_SSF_SUBJECT_OUT_OF_SCOPE',
  'ERR_SSF_POLL_IN_FLIGHT',
  'ERR_SSF_EMPTY_POLL_TOO_SOON',
  'ERR_SSF_DELIVERY_HOLDER_UNAVAILABLE',
] as const satisfies readonly ErrorCode[];

export type ProblemCode = (typeof problemCodes)[number];

/**
 * The one table from error codes to HTTP answers: problem+json, and in `oauth` the RFC 6749 JSON of
 * the OAuth 2.0 endpoints (the one exception, docs/decisions/0025). Routes throw the domain's, the ports' and the
 * issuer's errors as they are, and the error handler answers them from here: a code in the table
 * is a 4xx or a 503 (an outage the client may retry); anything else is a 500 that names nothing.
 * Codes are matched by value (ErrorCode, from the contracts), so this package imports no adapter and no domain.
 */
export const problemTable = {
  // Outages: nothing was answered 200 without a durable append, so the client may try again.
  ERR_EVENT_STORE_UNAVAILABLE: {
    status: 503,
    type: problemTypes.unavailable,
    title: 'Service Unavailable',
    detail: 'the event store cannot take the change now; try again shortly',
    retryAfterSeconds: outageRetryAfterSeconds,
    log: { level: 'warn', message: 'request refused during an outage' },
  },
  // A read model started on first use and still reading the log: asked again a second later, it
  // has usually caught up. Its own message names the model (the error's detail).
  ERR_READ_MODEL_CATCHING_UP: {
    status: 503,
    type: problemTypes.unavailable,
    title: 'Service Unavailable',
    retryAfterSeconds: 1,
    log: { level: 'info', message: 'request answered 503 while a read model catches up with the event log' },
  },
  ERR_SIGNING_KEY_UNAVAILABLE: {
    status: 503,
    type: problemTypes.unavailable,
    title: 'Service Unavailable',
    detail: 'the issuer has no usable signing key yet; try again shortly',
    retryAfterSeconds: outageRetryAfterSeconds,
    log: { level: 'warn', message: 'request refused during an outage' },
  },
  // A stored hash names a secret-hashing key this host does not hold, or the log rotated to one it
  // does not hold yet: nothing is hashed with another key, and nothing was written.
  ERR_SECRET_HASHING_KEY_UNAVAILABLE: {
    status: 503,
    type: problemTypes.unavailable,
    title: 'Service Unavailable',
    detail: 'a secret-hashing key this request needs is not at hand yet; try again shortly',
    retryAfterSeconds: outageRetryAfterSeconds,
    log: { level: 'warn', message: 'request refused: a secret-hashing key is missing' },
  },
  // The issuer's refusals: every one a 401 without a Bearer challenge (these endpoints take their
  // credentials in the body). The message is the same for every refresh refusal; the code stays in the log.
  ERR_INVALID_CLIENT: { ...tokenRefused, type: problemTypes.invalidCredentials, oauth: { status: 401, error: 'invalid_client', description: 'client authentication failed' } },
  ERR_CREDENTIAL_REVOKED: refreshTokenRefused,
  ERR_REFRESH_TOKEN_INVALID: refreshTokenRefused,
  ERR_REFRESH_TOKEN_USED: refreshTokenRefused,
  ERR_REFRESH_TOKEN_REUSED: refreshTokenRefused,
  ERR_REFRESH_TOKEN_REVOKED: refreshTokenRefused,
  ERR_REFRESH_TOKEN_EXPIRED: refreshTokenRefused,
  // RFC 6749 section 6: a confidential client's refresh token is bound to it (the OAuth door checks it).
  ERR_REFRESH_TOKEN_OTHER_CLIENT: refreshTokenRefused,
  // A scope wider than the client's or the family's, a resource not among the account's audiences
  // (RFC 8707), a request the protocol refuses, a token type revocation does not know (RFC 7009).
  ERR_INVALID_SCOPE: oauthInvalid('invalid_scope'),
  ERR_INVALID_TARGET: oauthInvalid('invalid_target'),
  ERR_OAUTH_REQUEST_INVALID: oauthInvalid('invalid_request'),
  ERR_OAUTH_TOKEN_TYPE_UNSUPPORTED: oauthInvalid('unsupported_token_type'),
  // RFC 9449 section 5: a DPoP proof the token endpoint cannot take, or one without the nonce it
  // asks for (the answer carries a DPoP-Nonce header). A bound refresh token without its key's
  // proof: refused like any refresh token on the v5 route, named on the token endpoint.
  ERR_DPOP_PROOF_INVALID: oauthInvalid('invalid_dpop_proof'),
  ERR_DPOP_NONCE_REQUIRED: oauthInvalid('use_dpop_nonce'),
  ERR_DPOP_KEY_MISMATCH: { ...tokenRefused, oauth: { status: 400, error: 'invalid_dpop_proof' } },
  // Away from its home region, a revoke this region cannot prove (docs/decisions/0018): only home can
  // tell a token newer than the mirror from one never issued, so the client tries again, never a false 200.
  ERR_REFRESH_TOKEN_UNPROVEN: {
    status: 503,
    type: problemTypes.unavailable,
    title: 'Service Unavailable',
    detail: 'the region that holds this refresh token cannot be reached now, and this region cannot yet prove the token current; try again shortly, or get a new pair with get-oauth-token',
    retryAfterSeconds: 5,
    // Expected while a region is cut off (tessera_remote_revocations_total counts them): not a warning each.
    log: { level: 'info', message: 'revoke refused: the home region is out of reach and the token cannot be proven here' },
    // Away from home and unable to reach it: the token may be good; only its home region can tell.
    oauth: { status: 503, error: 'temporarily_unavailable', description: "the refresh token's home region cannot be reached; try again" },
  },
  // Account writes belong to the control region (docs/decisions/0018); the message names it.
  ERR_NOT_CONTROL_REGION: {
    status: 409,
    type: problemTypes.notControlRegion,
    title: 'Conflict',
    log: { level: 'info', message: 'account write refused: not the control region' },
  },
  // Commands retry a conflicting append a few times (handleCommand's onConflict); a stream changed
  // by more requests at once than that outlasts them. Nothing was appended: the client sends it again.
  ERR_EXPECTED_REVISION_CONFLICT: {
    status: 409,
    type: problemTypes.conflict,
    title: 'Conflict',
    detail: 'changed by other requests at the same moment; nothing was changed by this one: send it again',
    retryAfterSeconds: 1,
    log: { level: 'info', message: 'a command lost to concurrent changes of the same stream' },
  },
  // After a start, account writes wait until every other region's account topic has been read.
  ERR_CONTROL_REGION_UNCONFIRMED: {
    status: 503,
    type: problemTypes.unavailable,
    title: 'Service Unavailable',
    retryAfterSeconds: outageRetryAfterSeconds,
    log: { level: 'warn', message: 'account write refused: the control region is not confirmed yet' },
  },
  // What an admin route names does not exist.
  ERR_FAMILY_NOT_FOUND: notFound,
  ERR_ACCOUNT_NOT_FOUND: notFound,
  ERR_ADMIN_TOKEN_NOT_FOUND: notFound,
  ERR_CREDENTIAL_NOT_FOUND: notFound,
  // A value no account may have (a name, a permission, an audience, a client key): the account routes' 400, as the CLI's exit 2.
  ERR_INVALID_ACCOUNT_INPUT: invalid,
  // A query parameter an audit route cannot use; the error names it (`field`, `reason`).
  ERR_INVALID_AUDIT_QUERY: invalid,
  // A JSON body member that names an object's prototype (json-body.ts): refused by name, never dropped.
  ERR_FORBIDDEN_BODY_FIELD: invalid,
  // An audit query stopped at TESSERA_AUDIT_QUERY_BUDGET_MS: its message names the budget and how to narrow the query.
  ERR_AUDIT_QUERY_OVER_BUDGET: {
    status: 503,
    type: problemTypes.unavailable,
    title: 'Service Unavailable',
    log: { level: 'warn', message: 'audit query stopped at its time budget' },
  },
  // The archive failed its verification against the anchors in the log: an answer without it would
  // be missing rows, or show changed ones. The message names the break; it lasts until an operator restores the archive.
  ERR_ARCHIVE_UNTRUSTED: {
    status: 503,
    type: problemTypes.unavailable,
    title: 'Service Unavailable',
    log: { level: 'warn', message: 'audit query refused: the archive failed its verification' },
  },
  // The Shared Signals transmitter: another receiver's stream is the same 404 as none.
  ERR_SSF_STREAM_NOT_FOUND: notFound,
  ERR_SSF_RECEIVER_NOT_FOUND: notFound,
  ERR_INVALID_SSF_REQUEST: invalid,
  ERR_INVALID_SSF_RECEIVER_INPUT: invalid,
  // A receiver at its most streams: it deletes one first. The message names the setting.
  ERR_SSF_STREAM_LIMIT: {
    status: 409,
    type: problemTypes.conflict,
    title: 'Conflict',
    log: { level: 'info', message: 'a Shared Signals receiver has the most streams it may have' },
  },
  // A receiver scoped to accounts names a subject outside them: the same answer whether or not it exists.
  ERR_SSF_SUBJECT_OUT_OF_SCOPE: {
    status: 403,
    type: problemTypes.forbidden,
    title: 'Forbidden',
    log: { level: 'info', message: 'a Shared Signals subject outside its receiver\'s accounts was refused' },
  },
  // A stream is polled one poll at a time: concurrent polls of it would each answer the same SETs.
  ERR_SSF_POLL_IN_FLIGHT: {
    status: 429,
    type: problemTypes.tooManyRequests,
    title: 'Too Many Requests',
    retryAfterSeconds: 1,
    log: { level: 'info', message: 'a concurrent poll of a Shared Signals stream was refused' },
  },
  // A poll that returns at once with nothing to answer, within TESSERA_SSF_EMPTY_POLL_INTERVAL of the stream's last empty answer; the route sets Retry-After to what is left of it.
  ERR_SSF_EMPTY_POLL_TOO_SOON: {
    status: 429,
    type: problemTypes.tooManyRequests,
    title: 'Too Many Requests',
    log: { level: 'info', message: 'an empty poll of a Shared Signals stream asked for too soon' },
  },
  // A poll or status read at a replica that does not deliver, while no replica holds the delivery
  // lease or the holder cannot be reached: a takeover is at most the lease's TTL away.
  ERR_SSF_DELIVERY_HOLDER_UNAVAILABLE: {
    status: 503,
    type: problemTypes.unavailable,
    title: 'Service Unavailable',
    detail: 'the replica that delivers Shared Signals cannot be reached now; try again shortly',
    retryAfterSeconds: 1,
    log: { level: 'warn', message: 'a Shared Signals request could not reach the delivering replica' },
  },
  // SSF 1.0 section 8.1.4.2: verifications closer than min_verification_interval; the route sets Retry-After to what is left of it.
  ERR_SSF_VERIFICATION_TOO_SOON: {
    status: 429,
    type: problemTypes.tooManyRequests,
    title: 'Too Many Requests',
    log: { level: 'info', message: 'a Shared Signals verification asked for too soon' },
  },
} as const satisfies Record<ProblemCode, ProblemRule>;

function hasRule(code: string): code is ProblemCode {
  return Object.hasOwn(problemTable, code);
}

/** The answer on the OAuth 2.0 endpoints for a coded error, with its rule; undefined for an error that is a 500 there. */
export function oauthAnswerFor(error: unknown): { readonly answer: Required<OAuthAnswer>; readonly rule: ProblemRule } | undefined {
  const code = errorCode(error);
  if (!(error instanceof Error) || code === undefined || !hasRule(code)) return undefined;
  const rule: ProblemRule = problemTable[code];
  const answer = rule.oauth ?? (rule.status === 503 ? { status: 503, error: 'temporarily_unavailable' } : undefined);
  if (answer === undefined) return undefined;
  return { answer: { ...answer, description: answer.description ?? rule.detail ?? error.message }, rule };
}

/** The problem document for a coded error the table knows; undefined for any other error. */
export function problemFor(error: unknown): { readonly problem: Problem; readonly rule: ProblemRule } | undefined {
  const code = errorCode(error);
  if (!(error instanceof Error) || code === undefined || !hasRule(code)) return undefined;
  const rule: ProblemRule = problemTable[code];
  const problem: Problem = { type: rule.type, title: rule.title, status: rule.status, detail: rule.detail ?? error.message };
  const field = fieldOf(error);
  return { problem: field ? { ...problem, errors: [field] } : problem, rule };
}

/** An invalid-input error that names its field (`field`/`parameter` and `reason`), as a problem's `errors` entry. */
function fieldOf(error: Error): { field: string; message: string } | undefined {
  const field = 'parameter' in error && typeof error.parameter === 'string' ? error.parameter : 'field' in error && typeof error.field === 'string' ? error.field : undefined;
  if (field === undefined || !('reason' in error) || typeof error.reason !== 'string') return undefined;
  return { field, message: error.reason };
}
