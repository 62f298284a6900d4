import { Problem } from '@tessera/contracts';

/** What each error status means on Tessera's routes, as the OpenAPI document says it. */
const descriptions = {
  400: 'Bad Request: a field or parameter is missing, empty, unknown or invalid (problem+json lists them in `errors`)',
  401: 'Unauthorized: the credentials or the token are not valid',
  403: 'Forbidden: the token is valid but lacks the permission (`WWW-Authenticate: Bearer error="insufficient_scope", scope=…`)',
  404: 'Not Found: what the request names does not exist, or is not the caller\'s',
  409: 'Conflict: other requests changed the same thing at the same moment, and nothing was changed by this one; send it again after `Retry-After` seconds',
  413: 'Content Too Large: the body is over 16 KiB',
  414: 'URI Too Long: a segment of the path is over 100 characters as sent, percent-encoding included (the router refuses it before the route)',
  415: 'Unsupported Media Type: this route does not take that content type',
  429: 'Too Many Requests: too many attempts from this address or for this credential; wait for `Retry-After` seconds',
  503: 'Service Unavailable: not ready yet, or the event store or signing key is unavailable for a moment; retry after `Retry-After` seconds',
} as const;

export type ProblemStatus = keyof typeof descriptions;

/**
 * Route-schema responses for error statuses, each an RFC 9457 `application/problem+json` body,
 * so the document says what the answer really carries. fastify serializes a reply by its
 * content type, which sendProblem sets to this one.
 */
export function problemResponses<S extends ProblemStatus>(...statuses: S[]): Record<S, ProblemResponse> {
  const responses = {} as Record<S, ProblemResponse>;
  for (const status of statuses) responses[status] = { description: descriptions[status], content: { 'application/problem+json': { schema: Problem } } };
  return responses;
}

export interface ProblemResponse {
  readonly description: string;
  readonly content: { readonly 'application/problem+json': { readonly schema: typeof Problem } };
}
