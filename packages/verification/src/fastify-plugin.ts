import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AccessTokenClaims } from '@tessera/contracts';
import { sendAccessRefusal } from './access-refusal.js';
import type { AccessDecision, AccessRequirement, BearerVerifier } from './bearer-verifier.js';

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
    // A callback hook deciding synchronously from memory: an async hook would cost every protected
    // request a promise and a microtask turn (measured on protected requests). Only a token signed by a key not known
    // yet takes the asynchronous path (one refresh of the keys, then the decision again, as check() does).
    app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      const requirement = request.routeOptions.config.tessera;
      if (!requirement) return done();
      const answer = (decision: AccessDecision) => {
        // Refused: answered here, and the chain stops because `done` is not called.
        if (decision.status !== 200) return void sendAccessRefusal(reply, decision);
        request.tesseraClaims = decision.claims;
        done();
      };
      const decision = options.verifier.decide(request.headers.authorization, requirement);
      if (options.verifier.needsKeyRefresh(decision)) {
        // Whatever fails on this path (the refresh, or answering) goes to fastify's error handler, as a throw from an async hook did.
        options.verifier
          .refreshThenDecide(request.headers.authorization, requirement)
          .then(answer)
          .catch((error: unknown) => done(error instanceof Error ? error : new Error(String(error))));
        return;
      }
      answer(decision);
    });
  },
  { name: '@tessera/verification', fastify: '5.x' },
);
