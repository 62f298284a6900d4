import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AccessTokenClaims } from '@tessera/contracts';
import { sendAccessRefusal } from './access-refusal.js';
import { runRequestSteps, type RequestStep } from '@tessera/http';
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
  /**
   * For a server that runs its own per-request steps in one onRequest hook (as Tessera's does):
   * the check joins those steps, after the ones already there, instead of adding a hook of its
   * own, which fastify would cost a turn per request. Leave it out anywhere else.
   */
  readonly steps?: { push(step: RequestStep): unknown };
}

/**
 * The check as a request step: true when the request goes on (a route that is not protected, or
 * an allowed token, its claims on `request.tesseraClaims`), false when it has been refused, and a
 * promise of either when the keys are refreshed first for a kid the verifier does not know.
 */
export function bearerCheck(verifier: BearerVerifier): RequestStep {
  return (request, reply) => {
    const requirement = request.routeOptions.config.tessera;
    if (!requirement) return true;
    const decision = verifier.decide(request.headers.authorization, requirement);
    if (verifier.needsKeyRefresh(decision)) {
      return verifier.refreshThenDecide(request.headers.authorization, requirement).then((afterRefresh) => admit(request, reply, afterRefresh));
    }
    return admit(request, reply, decision);
  };
}

function admit(request: FastifyRequest, reply: FastifyReply, decision: AccessDecision): boolean {
  if (decision.status !== 200) {
    void sendAccessRefusal(reply, decision);
    return false;
  }
  request.tesseraClaims = decision.claims;
  return true;
}

/**
 * For any fastify service: register once, then mark a route with
 * `config: { tessera: { interface: 'v5', permission: 'transaction:charge' } }`.
 * Unmarked routes are left alone.
 */
export const tesseraAuth = fp<TesseraAuthOptions>(
  async (app: FastifyInstance, options) => {
    app.decorateRequest('tesseraClaims', undefined);
    const check = bearerCheck(options.verifier);
    if (options.steps) {
      options.steps.push(check);
      return;
    }
    // A callback hook deciding synchronously from memory: an async hook would cost every protected
    // request a promise and a microtask turn (measured on protected requests). Only a token signed by a key not known
    // yet takes the asynchronous path (one refresh of the keys, then the decision again, as check() does).
    const own = [check];
    app.addHook('onRequest', (request, reply, done) => runRequestSteps(own, request, reply, done));
  },
  { name: '@tessera/verification', fastify: '5.x' },
);
