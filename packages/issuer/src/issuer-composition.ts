import { wireAdminApi, type AdminApi } from '@tessera/admin';
import { wireAudit } from '@tessera/audit';
import { mirroredRegionsOf } from '@tessera/config';
import { Jwks } from '@tessera/contracts';
import type { GuardedEventStore } from '@tessera/event-store';
import { epochSeconds, followInto, openGuardedStore, registerGauges, untilAvailable, type Host } from '@tessera/host';
import { problemResponses } from '@tessera/http';
import type { Composition, RouteRegistrar } from '@tessera/server';
import { wireSharedSignals, type SharedSignalsParts } from '@tessera/ssf';
import { throttleFailedAttempts, type AttemptThrottle } from './attempt-throttle.js';
import { createForwarding, type Forwarding } from './forward-to-home.js';
import { createInMemoryAttemptLimiter } from './in-memory-attempt-limiter.js';
import { createIssuerParts, type IssuerParts } from './issuer-parts.js';
import { isForwardedByPeer, recognizePeerRequests, refuseUnauthenticatedPeers } from './peer-link.js';
import { v1AuthenticateRoutes } from './routes-v1.js';
import { v5TokenRoutes } from './routes-v5.js';
import { wireSecretHashing, type SecretHashing } from './secret-hashing.js';

/**
 * `tessera issuer`'s wiring: the token operations and the JWKS on the public listener, the admin
 * API with the audit queries on the admin one, over the store TESSERA_EVENT_STORE names. No
 * verifier here: a cut made by the admin API dates this issuer's next tokens at once. The issuer
 * holds the log, so in the split topology it is where the audit trail is asked for; its audit
 * index lives in its data folder, like the all-in-one's.
 */
export async function composeIssuer(host: Host): Promise<Composition> {
  const store = await openGuardedStore(host);
  const hashing = wireSecretHashing(host, store);
  const issuer = createIssuerParts(host, store, hashing.keyring);
  const audit = wireAudit(host);
  const admin = wireAdminApi(host, store, { hashers: hashing.keyring, onCut: (event) => issuer.directory.apply(event), audit });
  // The Shared Signals transmitter: its read models join the process's follower, its SETs are signed with this issuer's keys.
  const signals = wireSharedSignals(host, store, sharedSignalsParts(issuer, admin, hashing));
  const following = followInto(host, store, [...hashing.readers, ...issuer.readers, ...admin.readers, ...signals.readers], {
    name: 'read models',
    notReady: 'read models are catching up with the event log',
    positionGauge: true,
  });
  signals.deliverOnceCaughtUp(following.whenCaughtUp);
  // Archiving removes nothing this process's read models have not applied (docs/decisions/0017).
  audit.holdArchivingFor(following);
  if (mirroredRegionsOf(host.config).length > 0) {
    // Other regions' public keys (for the JWKS) and the control region's credentials, through MirrorMaker 2.
    const { wireMirroredRegions } = await import('@tessera/mirror');
    wireMirroredRegions(host, { keys: issuer.keys, accounts: issuer.directory });
  }
  return { routes: [wireIssuer(host, store, issuer, Promise.all([hashing.checked, following.whenCaughtUp])), signals.routes], adminRoutes: [admin.routes, signals.adminRoutes] };
}

/** What the Shared Signals transmitter needs of an issuer process: its keyring, the secret-hashing keys, and the admin API's guard for the receivers' routes. */
export function sharedSignalsParts(issuer: Pick<IssuerParts, 'keyring'>, admin: Pick<AdminApi, 'guard'>, hashing: Pick<SecretHashing, 'keyring'>): SharedSignalsParts {
  return {
    keyring: issuer.keyring,
    hashers: hashing.keyring,
    requireScope: (scope) => admin.guard.requireScope(scope),
    // The guard ran first (onRequest), so the admin token is known on every request it let through.
    adminTokenIdOf: (request) => request.adminToken?.id ?? 'unknown',
  };
}

/**
 * Wires an issuer into a process: once its read models have caught up (and its secret-hashing key
 * was checked against the log: `caughtUp` says when both are done) it makes sure it has a
 * signing key (publishing one if it has none), keeps one for as long as it runs, and is ready
 * only while it can sign. Returns its routes: the JWKS and the token operations.
 */
export function wireIssuer(host: Host, store: GuardedEventStore, issuer: IssuerParts, caughtUp: Promise<unknown>): RouteRegistrar {
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
      });
      host.onClose(async () => stopKeeping());
    }),
  );
  // Counted failures reach the log every 10 s and at shutdown (before the store closes: closers run last-in first-out).
  host.onClose(issuer.authenticationFailures.start());
  return issuerRoutes(issuer, attemptThrottle(host), peerLink(host));
}

/** The link to other regions' issuers, from TESSERA_REGION, TESSERA_PEER_* (docs/multi-region.md, docs/decisions/0012). */
function peerLink(host: Host): PeerLink {
  const { config } = host;
  const secret = config.TESSERA_PEER_SECRET;
  const regions = { own: config.TESSERA_REGION, bareFamilies: config.TESSERA_BARE_FAMILY_REGION, peers: config.TESSERA_PEER_REGIONS ?? {} };
  // With a region, forwarding is on: a family named for an unconfigured region is refused, not looked up here.
  const forwarding = config.TESSERA_REGION !== undefined && secret !== undefined ? createForwarding({ regions, secret, timeoutSeconds: config.TESSERA_PEER_TIMEOUT }) : undefined;
  return { secret, forwarding };
}

export interface PeerLink {
  /** TESSERA_PEER_SECRET: forwarded requests are accepted only with it. */
  readonly secret: string | undefined;
  readonly forwarding: Forwarding | undefined;
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
export function issuerRoutes(issuer: Pick<IssuerParts, 'tokens' | 'keys' | 'now'>, throttle?: AttemptThrottle, link?: PeerLink): RouteRegistrar {
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
    });
  };
}
