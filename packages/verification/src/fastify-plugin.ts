import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AccessTokenClaims } from '@tessera/contracts';
import { sendAccessRefusal } from './access-refusal.js';
import type { AccessRequirement, BearerVerifier } from './bearer-verifier.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Protects the route: the interface its tokens belong to and the permission it needs. */
    tessera?: AccessRequirement;
  }
  interface FastifyRequest {
    /** The verified token's claims on a protected route. */
    tesseraClaims?: AccessTokenClaims;
  }
}

export interface TesseraAuthOptions {
  readonly verifier: BearerVerifier;
}

/**
 * For any fastify service: register once, then mark a route with
 * `config: { tessera: { interface: 'v5', permission: 'transaction:charge' } }`.
 * Unmarked routes are left alone.
 */
export const tesseraAuth = fp<TesseraAuthOptions>(
  async (app: FastifyInstance, options) => {
    app.decorateRequest('tesseraClaims', undefined);
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const requirement = request.routeOptions.config.tessera;
      if (!requirement) return;
      const decision = await options.verifier.check(request.headers.authorization, requirement);
      if (decision.status !== 200) return sendAccessRefusal(reply, decision);
      request.tesseraClaims = decision.claims;
    });
  },
  { name: '@tessera/verification', fastify: '5.x' },
);
