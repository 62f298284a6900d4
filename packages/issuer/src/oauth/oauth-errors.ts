import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { CodedError, errorCode, OAuthErrorResponse } from '@tessera/contracts';
import { oauthAnswerFor, type OAuthErrorName } from '@tessera/http';

/** A request to an OAuth 2.0 endpoint that the protocol refuses before any token is looked at. */
export class OAuthRequestRefused extends CodedError {
  constructor(
    readonly code: 'ERR_OAUTH_REQUEST_INVALID' | 'ERR_OAUTH_TOKEN_TYPE_UNSUPPORTED' | 'ERR_DPOP_PROOF_INVALID' | 'ERR_DPOP_NONCE_REQUIRED',
    message: string,
  ) {
    super(message);
  }
}

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
  const coded = oauthAnswerFor(error);
  if (coded !== undefined) {
    const { answer, rule } = coded;
    request.log[rule.log.level]({ refusal: errorCode(error) }, rule.log.message);
    if (rule.retryAfterSeconds !== undefined) reply.header('retry-after', String(rule.retryAfterSeconds));
    return sendOAuthError(reply, answer.status, answer.error, answer.description);
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
  400: 'Bad Request (RFC 6749 section 5.2): `invalid_request`, `invalid_grant`, `invalid_scope`, `invalid_target` (RFC 8707), `unsupported_grant_type`, `unauthorized_client`, `unsupported_token_type`, or (RFC 9449) `invalid_dpop_proof` or `use_dpop_nonce` with a `DPoP-Nonce` header',
  401: 'Unauthorized: `invalid_client`, with `WWW-Authenticate: Basic`',
  413: 'Content Too Large: `invalid_request`, the body is over 64 KiB',
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
