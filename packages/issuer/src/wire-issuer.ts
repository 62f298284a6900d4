import { Jwks } from '@tessera/events';
import type { GuardedEventStore } from '@tessera/event-store';
import { epochSeconds, registerGauges, registerLabelledCounter, registerLabelledGauge, untilAvailable, type Host } from '@tessera/host';
import { problemResponses } from '@tessera/http';
import type { RouteRegistrar } from '@tessera/server';
import { throttleFailedAttempts, type AttemptThrottle } from './attempt-throttle.js';
import { createForwarding, type Forwarding } from './forward-to-home.js';
import { createInMemoryAttemptLimiter } from './in-memory-attempt-limiter.js';
import { requestMetadata } from './http-request.js';
import type { IssuerParts } from './issuer-parts.js';
import type { IssuerRegionSettings } from './issuer-region-settings.js';
import { PeerHealth } from './peer-health.js';
import { recordRevokedElsewhere } from './revoked-elsewhere.js';
import { isForwardedByPeer, recognizePeerRequests, refuseUnauthenticatedPeers } from './peer-link.js';
import { v1AuthenticateRoutes } from './routes-v1.js';
import { v5TokenRoutes } from './routes-v5.js';

/**
 * What an issuer takes from other regions' mirrored topics beyond keys and accounts (docs/decisions/0018):
 * their family events, the check material a revoke of their families is decided from here; and the
 * revocations they recorded of this region's families, folded into refresh decisions at once and
 * recorded in the family's own stream once this process may write.
 */
export function issuerMirrorTargets(
  host: Host,
  store: GuardedEventStore,
  issuer: Pick<IssuerParts, 'regions' | 'now'>,
  writable: Promise<unknown>,
  onFamilyEvent?: Parameters<typeof recordRevokedElsewhere>[2]['onFamilyEvent'],
) {
  const regions = issuer.regions;
  if (!regions) return {};
  const record = recordRevokedElsewhere(host, store, { now: issuer.now, writable, onFamilyEvent });
  return {
    families: regions.material,
    remoteRevocations: {
      apply: (event: Parameters<typeof regions.revokedElsewhere.apply>[0], recordedIn: string) => {
        if (regions.revokedElsewhere.apply(event)) record(event, recordedIn);
      },
    },
  };
}

/**
 * Wires an issuer into a process: once its read models have caught up (and its secret-hashing key
 * was checked against the log: `caughtUp` says when both are done) it makes sure it has a
 * signing key (publishing one if it has none), keeps one for as long as it runs, and is ready
 * only while it can sign. Returns its routes: the JWKS and the token operations. With `regions`,
 * the link to other regions' issuers: forwarding to a family's home, and forwarded requests accepted.
 */
export function wireIssuer(host: Host, store: GuardedEventStore, issuer: IssuerParts, caughtUp: Promise<unknown>, regions?: IssuerRegionSettings): RouteRegistrar {
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
  if (issuer.regions) wireRegionReadModels(host, issuer.regions, issuer.now);
  return issuerRoutes(issuer, attemptThrottle(host), peerLink(host, issuer, regions));
}

/** The check material and the revocations folded in from elsewhere: forgotten once they can matter no more, and counted. */
function wireRegionReadModels(host: Host, regions: NonNullable<IssuerParts['regions']>, now: () => number): void {
  const forget = setInterval(() => {
    regions.material.forgetExpired(now());
    regions.revokedElsewhere.forgetExpired(now());
  }, 60_000);
  forget.unref();
  host.onClose(async () => clearInterval(forget));
  registerGauges(host.metrics, {
    tessera_family_check_entries: { help: 'Families of other regions whose check material this process holds (from their mirrored family topics)', read: () => regions.material.size },
  });
  registerLabelledCounter(
    host.metrics,
    'tessera_remote_revocations_total',
    'Revokes of other regions\' families decided here while their home region was out of reach, by outcome (recorded: 200; unproven: 503; refused: 401)',
    'outcome',
    () => regions.remoteRevocation.outcomes(),
  );
  registerLabelledCounter(host.metrics, 'tessera_revoked_elsewhere_total', 'Revocations of this region\'s families that another region recorded, folded into refresh decisions here', 'source', () => ({ mirror: regions.revokedElsewhere.applied }));
}

/** The link to other regions' issuers, from the region settings (docs/multi-region.md, docs/decisions/0012 and 0018). */
function peerLink(host: Host, issuer: Pick<IssuerParts, 'regions'>, settings: IssuerRegionSettings | undefined): PeerLink {
  const link = settings?.peerLink;
  const secret = link?.secret;
  // With a region, forwarding is on: a family named for an unconfigured region is refused, not looked up here.
  if (settings?.own === undefined || link === undefined) return { secret, forwarding: undefined };
  const regions = { own: settings.own, bareFamilies: settings.bareFamilies, peers: settings.peers };
  const health = new PeerHealth({
    peers: regions.peers,
    failures: link.failures,
    probeIntervalSeconds: link.probeIntervalSeconds,
    onChange: (region, reachable, cause) =>
      reachable ? host.log.warn({ region }, 'peer region reachable again') : host.log.warn({ region, cause }, 'peer region marked unreachable: revokes of its families are decided here, refreshes answer 503'),
  });
  const stopProbing = health.start();
  host.onClose(async () => stopProbing());
  registerLabelledGauge(host.metrics, 'tessera_peer_reachable', 'Each peer region as the failure detector sees it: 1 reachable, 0 marked unreachable', ['region'], async () =>
    Object.entries(health.snapshot()).map(([region, reachable]) => [{ region }, reachable] as const),
  );
  const remote = issuer.regions?.remoteRevocation;
  const forwarding = createForwarding({
    regions,
    secret: link.secret,
    timeoutSeconds: link.timeoutSeconds,
    revokeTimeoutSeconds: link.revokeTimeoutSeconds,
    health,
    ...(remote ? { revokeHere: (refreshToken: string, request: Parameters<typeof requestMetadata>[0]) => remote.revoke(refreshToken, requestMetadata(request)) } : {}),
  });
  return { secret, forwarding };
}

export interface PeerLink {
  /** The peer link's shared secret: forwarded requests are accepted only with it. */
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
