import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { CodedError, errorCode, OAuthErrorResponse, type ErrorCode } from '@tessera/contracts';

/** The `error` values of RFC 6749 section 5.2 and RFC 7009 section 2.2.1 that Tessera answers. */
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
  | 'server_error';

/** A request to an OAuth 2.0 endpoint that the protocol refuses before any token is looked at. */
export class OAuthRequestRefused extends CodedError {
  constructor(
    readonly code: 'ERR_OAUTH_REQUEST_INVALID' | 'ERR_OAUTH_TOKEN_TYPE_UNSUPPORTED',
    message: string,
  ) {
    super(message);
  }
}

interface OAuthRule {
  readonly status: number;
  readonly error: OAuthErrorName;
  /** A fixed description; without one the error's own message (written for the client) is sent. */
  readonly description?: string;
  readonly retryAfterSeconds?: number;
}

const refreshRefused: OAuthRule = { status: 400, error: 'invalid_grant', description: 'the refresh token is not valid (unknown, expired, already used, revoked, or issued to another client)' };
const unavailable: OAuthRule = { status: 503, error: 'temporarily_unavailable', description: 'the token service cannot record tokens right now; try again', retryAfterSeconds: 2 };

/**
 * The codes the OAuth 2.0 endpoints answer other than 500, and how: a record over exactly these
 * codes, so a code renamed or removed in @tessera/contracts fails to compile here. Every refused
 * refresh token gets the same description, as on the v5 routes: the family id is public.
 */
export const oauthCodes = [
  'ERR_INVALID_CLIENT',
  'ERR_INVALID_SCOPE',
  'ERR_INVALID_TARGET',
  'ERR_CREDENTIAL_REVOKED',
  'ERR_REFRESH_TOKEN_INVALID',
  'ERR_REFRESH_TOKEN_USED',
  'ERR_REFRESH_TOKEN_REUSED',
  'ERR_REFRESH_TOKEN_REVOKED',
  'ERR_REFRESH_TOKEN_EXPIRED',
  'ERR_REFRESH_TOKEN_OTHER_CLIENT',
  'ERR_REFRESH_TOKEN_UNPROVEN',
  'ERR_OAUTH_REQUEST_INVALID',
  'ERR_OAUTH_TOKEN_TYPE_UNSUPPORTED',
  'ERR_EVENT_STORE_UNAVAILABLE',
  'ERR_SIGNING_KEY_UNAVAILABLE',
  'ERR_SECRET_HASHING_KEY_UNAVAILABLE',
] as const satisfies readonly ErrorCode[];

export type OAuthCode = (typeof oauthCodes)[number];

export const oauthTable = {
  ERR_INVALID_CLIENT: { status: 401, error: 'invalid_client', description: 'client authentication failed' },
  ERR_INVALID_SCOPE: { status: 400, error: 'invalid_scope' },
  // RFC 8707 section 2: a resource the client may not ask for.
  ERR_INVALID_TARGET: { status: 400, error: 'invalid_target' },
  ERR_CREDENTIAL_REVOKED: refreshRefused,
  ERR_REFRESH_TOKEN_INVALID: refreshRefused,
  ERR_REFRESH_TOKEN_USED: refreshRefused,
  ERR_REFRESH_TOKEN_REUSED: refreshRefused,
  ERR_REFRESH_TOKEN_REVOKED: refreshRefused,
  ERR_REFRESH_TOKEN_EXPIRED: refreshRefused,
  ERR_REFRESH_TOKEN_OTHER_CLIENT: refreshRefused,
  // Away from home and unable to reach it: the token may be good; only its home region can tell.
  ERR_REFRESH_TOKEN_UNPROVEN: { ...unavailable, description: "the refresh token's home region cannot be reached; try again" },
  ERR_OAUTH_REQUEST_INVALID: { status: 400, error: 'invalid_request' },
  ERR_OAUTH_TOKEN_TYPE_UNSUPPORTED: { status: 400, error: 'unsupported_token_type' },
  ERR_EVENT_STORE_UNAVAILABLE: unavailable,
  ERR_SIGNING_KEY_UNAVAILABLE: unavailable,
  ERR_SECRET_HASHING_KEY_UNAVAILABLE: unavailable,
} as const satisfies Record<OAuthCode, OAuthRule>;

const isOAuthCode = (code: string | undefined): code is OAuthCode => code !== undefined && Object.hasOwn(oauthTable, code);

/** The challenge of a 401 invalid_client (RFC 6749 section 5.2): the scheme the endpoints take in the header. */
export const clientChallenge = 'Basic realm="tessera", charset="UTF-8"';

/** An RFC 6749 section 5.2 error answer: JSON, never cached. */
export function sendOAuthError(reply: FastifyReply, status: number, error: OAuthErrorName, description: string): FastifyReply {
  if (status === 401) reply.header('www-authenticate', clientChallenge);
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .type('application/json')
    .send({ error, error_description: description });
}

/**
 * The OAuth 2.0 endpoints' error handler: RFC 6749 section 5.2 JSON instead of problem+json (the
 * one exception, docs/decisions). What the framework refuses (a body too large, a content type
 * it does not parse, a field of the wrong shape) is an invalid_request with its own status.
 */
export function answerOAuthError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const code = errorCode(error);
  if (isOAuthCode(code)) {
    const rule: OAuthRule = oauthTable[code];
    request.log.info({ refusal: code }, 'OAuth 2.0 request refused');
    if (rule.retryAfterSeconds !== undefined) reply.header('retry-after', String(rule.retryAfterSeconds));
    return sendOAuthError(reply, rule.status, rule.error, rule.description ?? error.message);
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    // A grant named but not one of the two: RFC 6749 has its own error for that.
    const grant = (request.body as { grant_type?: unknown } | undefined)?.grant_type;
    if (typeof grant === 'string' && error.validation.every((issue) => issue.instancePath === '/grant_type')) {
      return sendOAuthError(reply, 400, 'unsupported_grant_type', `grant_type ${JSON.stringify(grant.slice(0, 64))} is not supported; use client_credentials or refresh_token`);
    }
    const fields = error.validation.map((issue) => issue.instancePath.replace(/^\//, '').replaceAll('/', '.')).filter(Boolean);
    return sendOAuthError(reply, 400, 'invalid_request', `malformed or repeated parameter${fields.length === 1 ? '' : 's'}: ${[...new Set(fields)].join(', ') || 'the body'}`);
  }
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status < 500) return sendOAuthError(reply, status, 'invalid_request', requestRefusal(error));
  request.log.error({ err: { type: error.name, code: error.code, message: error.message } }, 'OAuth 2.0 request failed');
  return sendOAuthError(reply, 500, 'server_error', 'the request failed; it changed nothing that was not answered');
}

/** What fastify's own refusals say, in words for a client (never a parser's internals). */
function requestRefusal(error: FastifyError): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'the body must be application/x-www-form-urlencoded';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'the body is too large';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'the body is malformed';
    default:
      return 'the request is malformed';
  }
}

const oauthDescriptions = {
  400: 'Bad Request (RFC 6749 section 5.2): `invalid_request`, `invalid_grant`, `invalid_scope`, `invalid_target` (RFC 8707), `unsupported_grant_type`, `unauthorized_client` or `unsupported_token_type`',
  401: 'Unauthorized: `invalid_client`, with `WWW-Authenticate: Basic`',
  413: 'Content Too Large: `invalid_request`, the body is over 16 KiB',
  415: 'Unsupported Media Type: `invalid_request`, the body must be application/x-www-form-urlencoded',
  429: 'Too Many Requests: `temporarily_unavailable`, too many failed client authentications; wait for `Retry-After` seconds',
  503: 'Service Unavailable: `temporarily_unavailable`; retry after `Retry-After` seconds',
} as const;

type OAuthErrorStatus = keyof typeof oauthDescriptions;

interface OAuthErrorDocumentation {
  readonly description: string;
  readonly content: { readonly 'application/json': { readonly schema: typeof OAuthErrorResponse } };
}

/** Route-schema responses for the OAuth 2.0 endpoints' errors: RFC 6749 JSON, not problem+json. */
export function oauthErrorResponses<S extends OAuthErrorStatus>(...statuses: S[]): Record<S, OAuthErrorDocumentation> {
  // Filled below with exactly `statuses`, as problemResponses does.
  const responses = {} as Record<S, OAuthErrorDocumentation>;
  for (const status of statuses) responses[status] = { description: oauthDescriptions[status], content: { 'application/json': { schema: OAuthErrorResponse } } };
  return responses;
}
