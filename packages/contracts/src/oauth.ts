import { z } from 'zod';

/**
 * The OAuth 2.0 endpoints' bodies (docs/oauth.md). Requests are form-encoded, and unknown
 * parameters are ignored, as RFC 6749 section 3.2 requires; a parameter given twice is not a
 * string and is refused as an invalid_request.
 */
const parameter = (max: number) => z.string().max(max);
/**
 * Tokens, client ids and secrets are visible ASCII: anything else can never match one, and this
 * bounds a form-encoded body (each character at most three bytes) well inside the 64 KiB limit.
 */
const visibleAscii = (max: number) => parameter(max).regex(/^[\x21-\x7e]*$/, 'visible ASCII only');
/** RFC 6749 section 3.3 (and RFC 6750 section 3): a scope-token is printable ASCII but `"` and `\`. */
const scopeTokenCharacter = String.raw`[\x21\x23-\x5b\x5d-\x7e]`;
/** One scope-token, or nothing (for a check that refuses an empty one by name). */
export const scopeTokenSyntax = new RegExp(`^${scopeTokenCharacter}*$`);
/** A scope: scope-tokens separated by single spaces, or nothing. */
export const scopeSyntax = new RegExp(`^(?:${scopeTokenCharacter}+(?: ${scopeTokenCharacter}+)*)?$`);

/** RFC 6749 section 3.2: parameters the endpoint does not know are ignored, each within a bound. */
const ignoredParameter = z.string().max(256);

/**
 * The client authentication parameters of client_secret_post (RFC 6749 section 2.3.1) and of
 * private_key_jwt (RFC 7523 section 2.2). An assertion of an RSA-4096 key fits well in 8 KiB.
 */
const clientSecretPost = {
  client_id: visibleAscii(128).optional().describe('client_secret_post: the API Login ID; with private_key_jwt, optional and then the assertion\'s `sub`'),
  client_secret: visibleAscii(256).optional().describe('client_secret_post: the Transaction Key'),
  client_assertion_type: visibleAscii(128).optional().describe('private_key_jwt: `urn:ietf:params:oauth:client-assertion-type:jwt-bearer`'),
  client_assertion: visibleAscii(8192).optional().describe('private_key_jwt: a JWT signed with a key registered by `tessera accounts set-client-keys`'),
};

/** RFC 6749 sections 4.4.2 and 6. */
export const OAuthTokenRequest = z
  .object({
    grant_type: z.enum(['client_credentials', 'refresh_token']).describe('Any other is an `unsupported_grant_type`'),
    scope: parameter(2048)
      .regex(scopeSyntax, 'scope-tokens of printable ASCII but " and \\, separated by single spaces (RFC 6749 section 3.3)')
      .optional()
      .describe("Space-separated permissions, within the account's (or, on a refresh, the family's); absent or empty: all of them"),
    refresh_token: visibleAscii(512).optional().describe('For `refresh_token`: the current refresh token of a family issued to this client'),
    resource: visibleAscii(512)
      .optional()
      .describe("RFC 8707: one of the account's audiences (`tessera accounts set-audiences`); the tokens' `aud`. On a refresh, the family's. Absent: `tessera:v5`"),
    ...clientSecretPost,
  })
  .catchall(ignoredParameter);
export type OAuthTokenRequest = z.infer<typeof OAuthTokenRequest>;

/** RFC 6749 section 5.1. */
export const OAuthTokenResponse = z.object({
  access_token: z.string().describe('JWT access token (RFC 9068); `iss` is the metadata\'s `issuer`'),
  token_type: z.enum(['Bearer', 'DPoP']).describe('`DPoP` when the request carried a DPoP proof (RFC 9449): the access token is bound to its key (`cnf.jkt`)'),
  expires_in: z.number().int().positive().describe('Seconds until the access token expires'),
  refresh_token: z.string().describe('Single-use refresh token of the family (docs/decisions/0025 says why client_credentials returns one)'),
  scope: z.string().describe('The access token\'s permissions, space-separated'),
});
export type OAuthTokenResponse = z.infer<typeof OAuthTokenResponse>;

/** RFC 6749 section 5.2, the OAuth 2.0 endpoints' error body (not problem+json). */
export const OAuthErrorResponse = z.object({
  error: z.string().describe('invalid_request, invalid_client, invalid_grant, unauthorized_client, unsupported_grant_type, invalid_scope, invalid_target, unsupported_token_type, temporarily_unavailable or server_error'),
  error_description: z.string().optional(),
});
export type OAuthErrorResponse = z.infer<typeof OAuthErrorResponse>;

/** RFC 7009 section 2.1 and RFC 7662 section 2.1: the token, a hint of its type, and the caller's client authentication. */
export const OAuthTokenTypeHintRequest = z
  .object({
    token: visibleAscii(2048).describe('An access token or a refresh token'),
    token_type_hint: visibleAscii(64).optional().describe('`access_token` or `refresh_token`; a wrong hint is searched past'),
    ...clientSecretPost,
  })
  .catchall(ignoredParameter);
export type OAuthTokenTypeHintRequest = z.infer<typeof OAuthTokenTypeHintRequest>;

/** RFC 7662 section 2.2: `active` alone when the token is not active, or not the caller's to see. */
export const IntrospectionResponse = z.object({
  active: z.boolean(),
  scope: z.string().optional(),
  client_id: z.string().optional(),
  token_type: z.string().optional().describe('`Bearer` or `DPoP` for an access token, `refresh_token` for a refresh token'),
  cnf: z.object({ jkt: z.string() }).optional().describe('RFC 9449 section 6.2: the thumbprint of the key a DPoP-bound token is bound to'),
  exp: z.number().int().optional(),
  iat: z.number().int().optional(),
  sub: z.string().optional().describe('The account id'),
  aud: z.string().optional(),
  iss: z.string().optional(),
  jti: z.string().optional(),
});
export type IntrospectionResponse = z.infer<typeof IntrospectionResponse>;

/** RFC 8414 section 2: what the authorization server supports, and nothing it does not. */
export const AuthorizationServerMetadata = z.object({
  issuer: z.string(),
  token_endpoint: z.string(),
  jwks_uri: z.string(),
  introspection_endpoint: z.string(),
  revocation_endpoint: z.string(),
  grant_types_supported: z.array(z.string()),
  response_types_supported: z.array(z.string()),
  token_endpoint_auth_methods_supported: z.array(z.string()),
  introspection_endpoint_auth_methods_supported: z.array(z.string()),
  revocation_endpoint_auth_methods_supported: z.array(z.string()),
  token_endpoint_auth_signing_alg_values_supported: z.array(z.string()).optional(),
  introspection_endpoint_auth_signing_alg_values_supported: z.array(z.string()).optional(),
  revocation_endpoint_auth_signing_alg_values_supported: z.array(z.string()).optional(),
  /** RFC 9449 section 5.1: the algorithms the token endpoint takes DPoP proofs in. */
  dpop_signing_alg_values_supported: z.array(z.string()).optional(),
  scopes_supported: z.array(z.string()).optional(),
  service_documentation: z.string().optional(),
});
export type AuthorizationServerMetadata = z.infer<typeof AuthorizationServerMetadata>;
