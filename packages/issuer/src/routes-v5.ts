import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { GetTokenRequest, RefreshTokenRequest, RevokeResponse, TokenResponse } from '@tessera/contracts';
import { problemResponses } from '@tessera/http';
import type { Forwarding } from './forwarding.js';
import type { InterfaceTokenOperations, IssuedPair } from './token-service.js';
import { isoTime, noStore, requestMetadata } from './http-request.js';

// 429 comes from the throttle on these routes, 503 from a store or signing-key outage (or before the first ready).
const errors = problemResponses(400, 401, 413, 415, 429, 503);

const tokenResponse = (pair: IssuedPair): TokenResponse => ({
  timestamp: isoTime(pair.issuedAt),
  token: pair.accessToken,
  refresh_token: pair.refreshToken,
  expires: isoTime(pair.expiresAt),
});

/** The schema of one token operation: its body, its answer, and every refusal it can give. */
const operation = <Body extends z.ZodType, Answer extends z.ZodType>(summary: string, body: Body, answer: Answer) => ({
  schema: { summary, tags: ['v5'], body, response: { 200: answer, ...errors } },
});

/** The current interface's token operations (docs/interface.md), JSON only. */
export async function v5TokenRoutes(app: FastifyInstance, options: { tokens: InterfaceTokenOperations; forwarding?: Forwarding | undefined }): Promise<void> {
  const { tokens, forwarding } = options;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  // A family homed in another region is refreshed and revoked there: only its home can check the
  // presented token (docs/multi-region.md, docs/decisions/0012). The forwarded answer is relayed as it is.
  const forwardedHome = async (refreshToken: string, request: FastifyRequest, reply: FastifyReply) => (await forwarding?.(refreshToken, request, reply)) ?? false;

  routes.post(
    '/v5/Authorization/get-oauth-token',
    operation('Exchange an API Login ID and Transaction Key for an access token and a refresh token', GetTokenRequest, TokenResponse),
    async (request, reply) => noStore(reply).send(tokenResponse(await tokens.getToken(request.body.api_login_id, request.body.transaction_key, requestMetadata(request)))),
  );

  routes.post(
    '/v5/Authorization/refresh-oauth-token',
    operation('Exchange the current refresh token for a new access token and refresh token (single use)', RefreshTokenRequest, TokenResponse),
    async (request, reply) => {
      if (await forwardedHome(request.body.refresh_token, request, reply)) return reply;
      return noStore(reply).send(tokenResponse(await tokens.refreshToken(request.body.refresh_token, requestMetadata(request))));
    },
  );

  routes.post(
    '/v5/Authorization/revoke-oauth-token',
    operation('Revoke a refresh token and the access token issued with it', RefreshTokenRequest, RevokeResponse),
    async (request, reply) => {
      if (await forwardedHome(request.body.refresh_token, request, reply)) return reply;
      return noStore(reply).send({ revoked: true as const, timestamp: isoTime((await tokens.revokeToken(request.body.refresh_token, requestMetadata(request))).revokedAt) });
    },
  );
}
