import { z } from 'zod';

/** Spec 2.1. Unknown fields are refused so a misspelt field name is a 400, not a silent default. */
export const GetTokenRequest = z.strictObject({
  api_login_id: z.string().min(1, 'must not be empty').max(128),
  transaction_key: z.string().min(1, 'must not be empty').max(256),
});
export type GetTokenRequest = z.infer<typeof GetTokenRequest>;

/** Spec 2.2, returned by get and refresh. */
export const TokenResponse = z.object({
  timestamp: z.iso.datetime().describe('When the token was issued (UTC, ISO 8601)'),
  token: z.string().describe('Access token (JWT); send as `Authorization: Bearer <token>`'),
  refresh_token: z.string().describe('Single-use refresh token'),
  expires: z.iso.datetime().describe('When the access token expires (UTC, ISO 8601)'),
});
export type TokenResponse = z.infer<typeof TokenResponse>;

/** Spec 2.3, for refresh and revoke. */
export const RefreshTokenRequest = z.strictObject({
  refresh_token: z.string().min(1, 'must not be empty').max(512),
});
export type RefreshTokenRequest = z.infer<typeof RefreshTokenRequest>;

/** revoke-oauth-token's answer (docs/interface.md). */
export const RevokeResponse = z.object({
  revoked: z.literal(true),
  timestamp: z.iso.datetime(),
});
export type RevokeResponse = z.infer<typeof RevokeResponse>;

/** Spec 2.4, form-encoded. */
export const LegacyAuthenticateRequest = z.strictObject({
  apiid: z.string().min(1, 'must not be empty').max(128),
  apikey: z.string().min(1, 'must not be empty').max(256),
});
export type LegacyAuthenticateRequest = z.infer<typeof LegacyAuthenticateRequest>;

/** Spec 2.5. */
export const LegacyAuthenticateResponse = z.object({
  result: z.object({
    authentication_token: z.string(),
    expires_in_seconds: z.number().int().positive(),
  }),
});
export type LegacyAuthenticateResponse = z.infer<typeof LegacyAuthenticateResponse>;

/** RFC 9457 problem details, with the offending fields for a 400. */
export const Problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  instance: z.string().optional(),
  errors: z
    .array(z.object({ field: z.string(), message: z.string() }))
    .optional()
    .describe('For 400: each offending field'),
  causes: z.array(z.string()).optional().describe('For 503 from /readyz: each reason the process is not ready'),
});
export type Problem = z.infer<typeof Problem>;

export const ChargeAcknowledgement = z.object({
  accepted: z.literal(true),
  account_id: z.string(),
  note: z.string(),
});

/** `GET /healthz`: the process is up. */
export const HealthStatus = z.object({ status: z.literal('ok') });

const boundPort = z.number().int().min(1).max(65535);

/** `GET /readyz` when ready; otherwise a 503 Problem with `causes`. */
export const ReadinessStatus = z.object({
  status: z.literal('ready'),
  ports: z
    .object({
      public: boundPort.optional().describe('The public listener (v5, and v1 unless it has its own): TESSERA_PORT'),
      legacy: boundPort.optional().describe('The v1 listener, when TESSERA_LEGACY_PORT gives v1 its own'),
      admin: boundPort.optional().describe('The admin listener (TESSERA_ADMIN_PORT); absent when it is off'),
    })
    .optional()
    .describe('The port each listener bound: with a port variable of 0 the system picks one as the listener opens, and this is where to read it'),
});

/** `GET /.well-known/jwks.json` (RFC 7517): the public signing keys, current and retired-but-unexpired. */
export const Jwks = z.object({
  // Not loose: a serializer holding this schema drops any other member, so a private `d` could never be sent.
  keys: z.array(
    z.object({
      kty: z.literal('EC'),
      crv: z.literal('P-256'),
      x: z.string(),
      y: z.string(),
      kid: z.string(),
      alg: z.literal('ES256'),
      use: z.literal('sig'),
    }),
  ),
});

/** `GET /openapi.json`. */
export const OpenApiDocument = z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }).describe('An OpenAPI 3.1 document');
