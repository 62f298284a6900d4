import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { InvalidArgument, type AccessTokenClaims } from '@tessera/contracts';
import { sendAccessRefusal } from './access-refusal.js';
import { runRequestSteps, type RequestStep } from '@tessera/http';
import { hasDpopScheme, type AccessDecision, type AccessRequirement, type BearerVerifier, type PresentedRequest } from './bearer-verifier.js';

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
   * The origin clients address this service at, such as `https://api.example.com`: what a DPoP
   * proof's `htu` must name (RFC 9449 section 4.3), with the request's path. Set it behind a proxy
   * or load balancer that does not pass its scheme and host on (or whose `X-Forwarded-Proto` and
   * `X-Forwarded-Host` fastify is not told to trust with `trustProxy`). Unset: the request's own
   * protocol and host (`request.protocol`, `request.host`).
   */
  readonly publicOrigin?: string;
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
export function bearerCheck(verifier: BearerVerifier, options: { readonly publicOrigin?: string } = {}): RequestStep {
  const origin = options.publicOrigin === undefined ? undefined : originOf(options.publicOrigin);
  return (request, reply) => {
    const requirement = request.routeOptions.config.tessera;
    if (!requirement) return true;
    const { authorization } = request.headers;
    // Built only for a DPoP request, so a bearer request costs what it always has.
    const presented = request.headers.dpop !== undefined || (authorization !== undefined && hasDpopScheme(authorization)) ? presentedRequest(request, origin) : undefined;
    const decision = verifier.decide(authorization, requirement, presented);
    if (verifier.needsKeyRefresh(decision)) {
      return verifier.refreshThenDecide(authorization, requirement, presented).then((afterRefresh) => admit(request, reply, afterRefresh));
    }
    return admit(request, reply, decision);
  };
}

/** The method and the URL the client addressed: the public origin (or the request's protocol and host) and the request's path. */
function presentedRequest(request: FastifyRequest, origin: string | undefined): PresentedRequest {
  return { method: request.method, url: `${origin ?? `${request.protocol}://${request.host}`}${request.url}`, dpop: request.headers.dpop };
}

/** `scheme://host[:port]`, checked once at registration: a path, query or fragment there would never match a proof's `htu`. */
function originOf(publicOrigin: string): string {
  const parsed = URL.canParse(publicOrigin) ? new URL(publicOrigin) : undefined;
  if (parsed === undefined || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
    throw new InvalidArgument(`publicOrigin must be an http(s) origin such as https://api.example.com, with no path, query or fragment (got ${JSON.stringify(publicOrigin)})`);
  }
  return parsed.origin;
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
    const check = bearerCheck(options.verifier, options.publicOrigin === undefined ? {} : { publicOrigin: options.publicOrigin });
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
