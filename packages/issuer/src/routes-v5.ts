import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { GetTokenRequest, RefreshTokenRequest, RevokeResponse, TokenResponse } from '@tessera/contracts';
import { problemResponses } from '@tessera/http';
import type { Forwarding } from './forward-to-home.js';
import type { IssuedPair, TokenService } from './token-service.js';
import { isoTime, noStore, requestMetadata } from './http-request.js';

// 429 comes from the throttle on these routes, 503 from a store or signing-key outage (or before the first ready).
const errors = problemResponses(400, 401, 413, 415, 429, 503);

const tokenResponse = (pair: IssuedPair): TokenResponse => ({
  timestamp: isoTime(pair.issuedAt),
  token: pair.accessToken,
  refresh_token: pair.refreshToken,
  expires: isoTime(pair.expiresAt),
});

/** Spec 4.1–4.3: the current interface's token operations, JSON only. */
export async function v5TokenRoutes(app: FastifyInstance, options: { tokens: TokenService; forwarding?: Forwarding | undefined }): Promise<void> {
  const { tokens, forwarding } = options;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/v5/Authorization/get-oauth-token',
    {
      schema: {
        summary: 'Exchange an API Login ID and Transaction Key for an access token and a refresh token',
        tags: ['v5'],
        body: GetTokenRequest,
        response: { 200: TokenResponse, ...errors },
      },
    },
    async (request, reply) => {
      const pair = await tokens.getToken(request.body.api_login_id, request.body.transaction_key, requestMetadata(request));
      return noStore(reply).send(tokenResponse(pair));
    },
  );

  routes.post(
    '/v5/Authorization/refresh-oauth-token',
    {
      schema: {
        summary: 'Exchange the current refresh token for a new access token and refresh token (single use)',
        tags: ['v5'],
        body: RefreshTokenRequest,
        response: { 200: TokenResponse, ...errors },
      },
    },
    async (request, reply) => {
      // A family homed in another region is refreshed there (docs/multi-region.md).
      const forwarded = await forwarding?.(request.body.refresh_token, request, reply);
      if (forwarded) return forwarded;
      const pair = await tokens.refreshToken(request.body.refresh_token, requestMetadata(request));
      return noStore(reply).send(tokenResponse(pair));
    },
  );

  routes.post(
    '/v5/Authorization/revoke-oauth-token',
    {
      schema: {
        summary: 'Revoke a refresh token and the access token issued with it',
        tags: ['v5'],
        body: RefreshTokenRequest,
        response: { 200: RevokeResponse, ...errors },
      },
    },
    async (request, reply) => {
      // Forwarded like refresh: only the home region can check the token (docs/decisions/0012).
      const forwarded = await forwarding?.(request.body.refresh_token, request, reply);
      if (forwarded) return forwarded;
      const { revokedAt } = await tokens.revokeToken(request.body.refresh_token, requestMetadata(request));
      return noStore(reply).send({ revoked: true as const, timestamp: isoTime(revokedAt) });
    },
  );
}
