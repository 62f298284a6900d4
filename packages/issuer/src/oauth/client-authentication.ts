import type { FastifyRequest } from 'fastify';
import { IssuerRefusal } from '../issuer-errors.js';
import { assertedClientId, jwtBearerAssertionType } from './client-assertion.js';

/**
 * The client authentication methods of the OAuth 2.0 endpoints (RFC 6749 section 2.3.1, RFC 7523
 * section 2.2), as the metadata names them.
 */
export const clientAuthenticationMethods = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
export type ClientAuthenticationMethod = (typeof clientAuthenticationMethods)[number];

/** What a request presents as its client: an account's API Login ID and Transaction Key, or a JWT assertion naming it. */
export type PresentedClient =
  | { readonly method: 'client_secret_basic' | 'client_secret_post'; readonly clientId: string; readonly clientSecret: string }
  | { readonly method: 'private_key_jwt'; readonly clientId: string; readonly assertion: string };

/** The body parameters client_secret_post and private_key_jwt use. */
export interface ClientSecretParameters {
  readonly client_id?: string | undefined;
  readonly client_secret?: string | undefined;
  readonly client_assertion_type?: string | undefined;
  readonly client_assertion?: string | undefined;
}

const basicScheme = /^basic +([A-Za-z0-9+/=]*) *$/i;
const isBasic = (authorization: string) => /^basic(?: |$)/i.test(authorization);

/**
 * The client a request authenticates as, by exactly one method: an `Authorization: Basic` header
 * (client_secret_basic), `client_id` and `client_secret` in the body (client_secret_post), or
 * `client_assertion_type` and `client_assertion` in the body (private_key_jwt). Anything else is an
 * invalid_client (RFC 6749 section 5.2, "client authentication failed"): none at all, a header that
 * does not decode, two methods at once (section 2.3 forbids it; which one would be meant is
 * unknowable), an assertion without its type, or a client_id naming another client.
 */
export function presentedClient(request: FastifyRequest, body: ClientSecretParameters): PresentedClient {
  // Only HTTP Basic is a client authentication method here; another scheme (a bearer token sent by
  // mistake) authenticates nothing, and the body decides.
  const authorization = request.headers.authorization;
  const inBody = body.client_secret !== undefined;
  const byHeader = authorization !== undefined && isBasic(authorization);
  if (body.client_assertion !== undefined || body.client_assertion_type !== undefined) {
    if (byHeader || inBody) throw new IssuerRefusal('ERR_INVALID_CLIENT', 'the client authenticated with more than one method (a client assertion and a secret)');
    return assertionClient(body);
  }
  if (byHeader) {
    if (inBody) throw new IssuerRefusal('ERR_INVALID_CLIENT', 'the client authenticated with more than one method (an Authorization header and client_secret)');
    const basic = basicCredentials(authorization);
    // A body client_id beside the header must name the same client (RFC 6749 section 3.2.1 lets clients send it).
    if (body.client_id !== undefined && body.client_id !== basic.clientId) {
      throw new IssuerRefusal('ERR_INVALID_CLIENT', 'client_id in the body differs from the client in the Authorization header');
    }
    return basic;
  }
  if (inBody) {
    if (body.client_id === undefined) throw new IssuerRefusal('ERR_INVALID_CLIENT', 'client_secret without client_id names no client');
    return { method: 'client_secret_post', clientId: body.client_id, clientSecret: body.client_secret! };
  }
  throw new IssuerRefusal('ERR_INVALID_CLIENT', 'client authentication is required (client_secret_basic, client_secret_post or private_key_jwt)');
}

/**
 * RFC 7523 section 2.2: the assertion names the client in `sub` (its signature is checked later,
 * with the keys of the client it names). A `client_id` beside it must name the same client (RFC
 * 7521 section 4.2).
 */
function assertionClient(body: ClientSecretParameters): PresentedClient {
  if (body.client_assertion === undefined || body.client_assertion_type === undefined) {
    throw new IssuerRefusal('ERR_INVALID_CLIENT', 'private_key_jwt takes both client_assertion_type and client_assertion');
  }
  if (body.client_assertion_type !== jwtBearerAssertionType) throw new IssuerRefusal('ERR_INVALID_CLIENT', `client_assertion_type must be ${jwtBearerAssertionType}`);
  const clientId = assertedClientId(body.client_assertion);
  if (clientId === undefined) throw new IssuerRefusal('ERR_INVALID_CLIENT', 'client_assertion is not a JWT naming the client in sub');
  if (body.client_id !== undefined && body.client_id !== clientId) {
    throw new IssuerRefusal('ERR_INVALID_CLIENT', 'client_id in the body differs from the client the assertion names');
  }
  return { method: 'private_key_jwt', clientId, assertion: body.client_assertion };
}

/**
 * RFC 6749 section 2.3.1: the id and the secret are form-encoded, joined by a colon, then base64.
 * The id holds no colon once encoded, so the first colon splits them.
 */
function basicCredentials(authorization: string): PresentedClient {
  const encoded = basicScheme.exec(authorization)?.[1];
  if (encoded === undefined) throw new IssuerRefusal('ERR_INVALID_CLIENT', 'the Authorization header is not HTTP Basic');
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new IssuerRefusal('ERR_INVALID_CLIENT', 'the Basic credentials hold no colon');
  const clientId = formDecoded(decoded.slice(0, colon));
  const clientSecret = formDecoded(decoded.slice(colon + 1));
  if (clientId === undefined || clientSecret === undefined || clientId === '') throw new IssuerRefusal('ERR_INVALID_CLIENT', 'the Basic credentials do not decode');
  return { method: 'client_secret_basic', clientId, clientSecret };
}

function formDecoded(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** The client a request names, without checking anything: what keys its throttling budget. Empty when it names none. */
export function claimedClientId(request: FastifyRequest): string {
  const body = request.body as ClientSecretParameters | undefined;
  if (typeof body?.client_id === 'string') return body.client_id;
  if (typeof body?.client_assertion === 'string') return assertedClientId(body.client_assertion) ?? '';
  const authorization = request.headers.authorization;
  if (authorization === undefined || !isBasic(authorization)) return '';
  try {
    return basicCredentials(authorization).clientId;
  } catch {
    return '';
  }
}
