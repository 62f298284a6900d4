import { FamilyCheckMaterial } from '@tessera/domain';
import type { FamilyEvent, TokenRevoked } from '@tessera/events';
import { logReader, type EventStore, type GuardedEventStore, type LogReader } from '@tessera/event-store';
import { epochSeconds, registerGauges, registerLabelledCounter, registerLabelledGauge, type Host } from '@tessera/host';
import { requestMetadata, type IssuerRegion, type PeerLink } from '@tessera/issuer';
import type { SecretHashers } from '@tessera/tokens';
import { createForwarding } from './forward-to-home.js';
import { createOAuthForwarding } from './oauth-forward-to-home.js';
import { PeerHealth } from './peer-health.js';
import type { RegionSettings } from './region-settings.js';
import { createRemoteRevocation, type RemoteRevocation } from './remote-revocation.js';
import { RevokedElsewhere, recordRevokedElsewhere } from './revoked-elsewhere.js';

/** What revoke from anywhere needs in an issuer's process (docs/decisions/0018), and what the issuer is given of it. */
export interface IssuerRegionParts extends IssuerRegion {
  /** Other regions' families, from their mirrored family topics: what a revoke of them is decided from here. */
  readonly material: FamilyCheckMaterial;
  /** Revoke here a family whose home region is out of reach. */
  readonly remoteRevocation: RemoteRevocation;
  /** This region's families revoked in another region: folded into refresh decisions. */
  readonly revokedElsewhere: RevokedElsewhere;
  /** For the process's follower of the log: the revocations this region recorded of other regions' families. */
  readonly readers: readonly LogReader[];
  /** Epoch seconds, from the host's clock. */
  readonly now: () => number;
}

/** Revocations this region recorded of other regions' families: the material learns them, so a second revoke is refused like at home. */
const recordedHere = /^revocations-/;

/**
 * The region parts of an issuer's process, or undefined when the settings name no region of its
 * own (an issuer of one region, or one that only accepts forwarded requests).
 */
export function createIssuerRegionParts(
  host: Pick<Host, 'config' | 'clock'>,
  settings: RegionSettings,
  deps: { readonly store: EventStore; readonly hashers: SecretHashers; readonly onFamilyEvent?: ((event: FamilyEvent) => void) | undefined },
): IssuerRegionParts | undefined {
  const own = settings.own;
  if (own === undefined) return undefined;
  const { config } = host;
  const now = () => epochSeconds(host.clock);
  const material = new FamilyCheckMaterial({ clockSkewSeconds: config.TESSERA_CLOCK_SKEW });
  const revokedElsewhere = new RevokedElsewhere({ own, bareFamilies: settings.bareFamilies, keepSeconds: config.TESSERA_REFRESH_TOKEN_TTL + config.TESSERA_CLOCK_SKEW, now });
  return {
    own,
    isRevokedElsewhere: (familyId) => revokedElsewhere.has(familyId),
    material,
    remoteRevocation: createRemoteRevocation({ store: deps.store, material, hashers: deps.hashers, now, onFamilyEvent: deps.onFamilyEvent }),
    revokedElsewhere,
    readers: [
      logReader(['TokenRevoked'], ({ event, stream }) => {
        if (recordedHere.test(stream)) material.apply(event);
      }),
    ],
    now,
  };
}

/**
 * Wires the region parts into an issuer's process: the check material and the revocations folded
 * in from elsewhere, forgotten once they can matter no more and counted; and the link to other
 * regions' issuers (docs/multi-region.md, docs/decisions/0012 and 0018), which the issuer's routes
 * take: forwarding to a family's home region when the process has a region and the peer secret,
 * and forwarded requests accepted whenever the secret is set.
 */
export function wireIssuerRegion(host: Host, settings: RegionSettings, parts: IssuerRegionParts | undefined): PeerLink {
  if (parts) wireRegionReadModels(host, parts);
  return peerLink(host, settings, parts);
}

function wireRegionReadModels(host: Host, parts: IssuerRegionParts): void {
  const stopForgetting = host.scheduler.every(60_000, () => {
    parts.material.forgetExpired(parts.now());
    parts.revokedElsewhere.forgetExpired(parts.now());
  });
  host.onClose(async () => stopForgetting());
  registerGauges(host.metrics, {
    tessera_family_check_entries: { help: 'Families of other regions whose check material this process holds (from their mirrored family topics)', read: () => parts.material.size },
  });
  registerLabelledCounter(
    host.metrics,
    'tessera_remote_revocations_total',
    'Revokes of other regions\' families decided here while their home region was out of reach, by outcome (recorded: 200; unproven: 503; refused: 401, or at /oauth2/revoke 200 or 400 unauthorized_client)',
    'outcome',
    () => parts.remoteRevocation.outcomes(),
  );
  registerLabelledCounter(host.metrics, 'tessera_revoked_elsewhere_total', 'Revocations of this region\'s families that another region recorded, folded into refresh decisions here', 'source', () => ({ mirror: parts.revokedElsewhere.applied }));
}

function peerLink(host: Host, settings: RegionSettings, parts: IssuerRegionParts | undefined): PeerLink {
  const link = settings.peerLink;
  const secret = link?.secret;
  // With a region, forwarding is on: a family named for an unconfigured region is refused, not looked up here.
  if (settings.own === undefined || link === undefined) return { secret, forwarding: undefined };
  const health = new PeerHealth({
    peers: settings.peers,
    failures: link.failures,
    probeIntervalSeconds: link.probeIntervalSeconds,
    scheduler: host.scheduler,
    onChange: (region, reachable, cause) =>
      reachable ? host.log.warn({ region }, 'peer region reachable again') : host.log.warn({ region, cause }, 'peer region marked unreachable: revokes of its families are decided here, refreshes answer 503'),
  });
  const stopProbing = health.start();
  host.onClose(async () => stopProbing());
  registerLabelledGauge(host.metrics, 'tessera_peer_reachable', 'Each peer region as the failure detector sees it: 1 reachable, 0 marked unreachable', ['region'], async () =>
    Object.entries(health.snapshot()).map(([region, reachable]) => [{ region }, reachable] as const),
  );
  const remote = parts?.remoteRevocation;
  const common = {
    regions: { own: settings.own, bareFamilies: settings.bareFamilies, peers: settings.peers },
    secret: link.secret,
    timeoutSeconds: link.timeoutSeconds,
    revokeTimeoutSeconds: link.revokeTimeoutSeconds,
    health,
  };
  type Request = Parameters<typeof requestMetadata>[0];
  const forwarding = createForwarding({
    ...common,
    ...(remote ? { revokeHere: (refreshToken: string, request: Request) => remote.revoke(refreshToken, requestMetadata(request)) } : {}),
  });
  const oauthForwarding = createOAuthForwarding({
    ...common,
    ...(remote
      ? { revokeHere: (refreshToken: string, request: Request, expected: { readonly accountId: string }) => remote.revoke(refreshToken, { ...requestMetadata(request), actor: 'oauth2:revoke' }, expected) }
      : {}),
  });
  return { secret: link.secret, forwarding, oauthForwarding };
}

/**
 * What an issuer takes from other regions' mirrored topics beyond keys and accounts (docs/decisions/0018):
 * their family events, the check material a revoke of their families is decided from here; and the
 * revocations they recorded of this region's families, folded into refresh decisions at once and
 * recorded in the family's own stream once this process may write.
 */
export function issuerMirrorTargets(
  host: Host,
  store: GuardedEventStore,
  parts: IssuerRegionParts | undefined,
  writable: Promise<unknown>,
  onFamilyEvent?: ((event: FamilyEvent) => void) | undefined,
) {
  if (!parts) return {};
  const record = recordRevokedElsewhere(host, store, { now: parts.now, writable, onFamilyEvent });
  return {
    families: parts.material,
    remoteRevocations: {
      apply: (event: TokenRevoked, recordedIn: string) => {
        if (parts.revokedElsewhere.apply(event)) record(event, recordedIn);
      },
    },
  };
}
