import { Jwks } from '@tessera/events';
import type { GuardedEventStore } from '@tessera/event-store';
import { epochSeconds, registerGauges, tokenIssuers, untilAvailable, type Host } from '@tessera/host';
import { problemResponses } from '@tessera/http';
import type { RouteRegistrar } from '@tessera/server';
import { throttleFailedAttempts, type AttemptThrottle } from './attempt-throttle.js';
import type { PeerLink } from './forwarding.js';
import { createInMemoryAttemptLimiter } from './in-memory-attempt-limiter.js';
import type { IssuerParts } from './issuer-parts.js';
import { isForwardedByPeer, recognizePeerRequests, refuseUnauthenticatedPeers } from './peer-link.js';
import { v1AuthenticateRoutes } from './routes-v1.js';
import { oauthRoutes, type OAuthRoutesOptions } from './oauth/oauth-routes.js';
import { DpopNonces } from './oauth/dpop-nonces.js';
import type { InterfaceTokenOperations } from './token-service.js';
import { v5TokenRoutes } from './routes-v5.js';

/**
 * Wires an issuer into a process: once its read models have caught up (and its secret-hashing key
 * was checked against the log: `caughtUp` says when both are done) it makes sure it has a
 * signing key (publishing one if it has none), keeps one for as long as it runs, and is ready
 * only while it can sign. Returns its routes: the JWKS and the token operations. With `link` (the
 * region module's), forwarding to a family's home region, and forwarded requests accepted.
 */
export function wireIssuer(host: Host, store: GuardedEventStore, issuer: IssuerParts, caughtUp: Promise<unknown>, link?: PeerLink): RouteRegistrar {
  // Ready only while the keyring can sign: a key retired from another host makes the issuer
  // unready until keepKey has published its replacement.
  host.readiness.add('signing key', () => (issuer.keyring.ready ? undefined : 'the issuer has no usable signing key'));
  const now = () => epochSeconds(host.clock);
  registerGauges(host.metrics, {
    tessera_signing_key_age_seconds: {
      help: 'Age of the signing key this issuer signs with, from its publication on the log (0 while it has none)',
      read: () => {
        const publishedAt = issuer.keyring.currentPublishedAt();
        return publishedAt === undefined ? 0 : Math.max(0, now() - publishedAt);
      },
    },
  });
  host.untilReady(
    caughtUp.then(async () => {
      const published = await untilAvailable(store, () => issuer.keyring.ensureKey(store, now()));
      // This process's key sets learn a new key at once rather than on the next log poll.
      if (published) issuer.keys.apply(published);
      const stopKeeping = issuer.keyring.keepKey(store, {
        now,
        onPublished: (event) => {
          issuer.keys.apply(event);
          host.log.info({ kid: event.kid }, 'published a new signing key: the one this issuer signed with was retired');
        },
        logger: host.log,
        clock: host.clock,
        scheduler: host.scheduler,
      });
      host.onClose(async () => stopKeeping());
    }),
  );
  // Counted failures reach the log every 10 s and at shutdown (before the store closes: closers run last-in first-out).
  host.onClose(issuer.authenticationFailures.start({ scheduler: host.scheduler }));
  const dpopNonces = host.config.TESSERA_DPOP_NONCE === 'required' ? new DpopNonces(issuer.hashers, issuer.now) : undefined;
  return issuerRoutes(issuer, attemptThrottle(host), link, { tokens: issuer.tokens, directory: issuer.directory, dpopNonces, ...oauthIssuers(host) });
}

/** The OAuth 2.0 door's `iss` (its tokens' and its metadata's), and every `iss` it accepts back. */
function oauthIssuers(host: Host) {
  const issuers = tokenIssuers(host);
  return { issuer: issuers.oauth, issuers: issuers.accepted, clockSkewSeconds: host.config.TESSERA_CLOCK_SKEW };
}

/** Failure budgets from TESSERA_THROTTLE_*, in this process's memory, counted in tessera_throttled_total. */
function attemptThrottle(host: Host): AttemptThrottle {
  const { config, metrics } = host;
  return {
    limiter: createInMemoryAttemptLimiter({ windowSeconds: config.TESSERA_THROTTLE_WINDOW, clock: host.clock }),
    limits: {
      credential: config.TESSERA_THROTTLE_CREDENTIAL_FAILURES,
      address: config.TESSERA_THROTTLE_ADDRESS_FAILURES,
      refresh: config.TESSERA_THROTTLE_REFRESH_FAILURES,
      proxy: config.TESSERA_THROTTLE_PROXY_FAILURES,
    },
    onThrottled: (operation, scope) => metrics.throttled.inc({ operation, scope }),
    uncharged: isForwardedByPeer,
  };
}

// 503 only before the process is first ready; after that the keys are served from memory.
const jwksSchema = {
  summary: 'The public signing keys (RFC 7517), current and retired-but-unexpired; cacheable for a minute',
  tags: ['keys'],
  response: { 200: Jwks, ...problemResponses(503) },
};

/**
 * The issuer's routes alone: the JWKS, and the token operations of the interfaces a listener
 * serves, throttled when a throttle is given (in their own context, so no other route pays for
 * its hooks).
 */
export function issuerRoutes(
  issuer: Pick<IssuerParts, 'keys' | 'now'> & { readonly tokens: InterfaceTokenOperations },
  throttle?: AttemptThrottle,
  link?: PeerLink,
  oauth?: Omit<OAuthRoutesOptions, 'keys' | 'now'>,
): RouteRegistrar {
  return async (app, listener) => {
    app.get('/.well-known/jwks.json', { schema: jwksSchema }, async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=60').send(issuer.keys.jwks(issuer.now())),
    );
    await app.register(async (tokenOperations) => {
      // A forwarded request is known as one before the throttle looks at it (a peer's is not
      // charged here), and one that failed to prove it is refused after (its 401 is charged).
      recognizePeerRequests(tokenOperations, link?.secret);
      if (throttle) throttleFailedAttempts(tokenOperations, throttle);
      refuseUnauthenticatedPeers(tokenOperations);
      if (listener.v5) await tokenOperations.register(v5TokenRoutes, { tokens: issuer.tokens, forwarding: link?.forwarding });
      if (listener.v1) await tokenOperations.register(v1AuthenticateRoutes, { tokens: issuer.tokens });
      // The OAuth 2.0 door, on the listener that serves the current interface.
      if (listener.v5 && oauth) {
        await tokenOperations.register(oauthRoutes, { keys: issuer.keys, now: issuer.now, ...oauth, forwarding: link?.oauthForwarding });
      }
    });
  };
}
