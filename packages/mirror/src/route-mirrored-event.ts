import {
  accountEventTypes,
  familyCheckEventTypes,
  isEventOf,
  signingKeyEventTypes,
  tokenCutEventTypes,
  type AccountEvent,
  type ControlRegionChanged,
  type FamilyEvent,
  type SigningKeyEvent,
  type TokenCutEvent,
  type TokenRevoked,
  type TokenRotated,
} from '@tessera/events';
import type { FeedEvent } from '@tessera/feed';
import type { MirroredTopic } from './mirrored-topics.js';

/**
 * The read models another region's events land in. Each is optional: an issuer has no
 * revocation projection, a Kafka-fed verifier no use for credentials.
 */
export interface MirrorTargets {
  /** Other regions' public keys: their tokens verify here with no call to them. */
  readonly keys?: { apply(event: SigningKeyEvent): void };
  /** Credentials, permissions and cuts made in other regions (the control region's accounts). */
  readonly accounts?: { apply(event: AccountEvent): void };
  /** Rotations, revocations and cuts of other regions' families and accounts. */
  readonly projection?: { apply(event: TokenRotated | TokenRevoked | TokenCutEvent): void };
  /**
   * Other regions' family events (`<region>.tessera.families`): the check material a revoke of
   * their families is decided from here while their region is out of reach. Followed only by a
   * process that revokes (an issuer, the all-in-one), and not a condition of readiness: material
   * not read yet only makes such a revoke answer 503, as it did before the material existed.
   */
  readonly families?: { apply(event: FamilyEvent): void };
  /**
   * A revocation another region recorded where it arrived (a `revocations-<familyId>` stream there),
   * handed over before the projection applies it: the home region folds it into its refresh decisions.
   */
  readonly remoteRevocations?: { apply(event: TokenRevoked, recordedIn: string): void };
  /**
   * Other regions' revocations and cuts, from their revocation topics, with where each was recorded:
   * the Shared Signals transmitter records them for this region's receivers.
   */
  readonly signals?: { receive(event: TokenRevoked | TokenCutEvent, source: { readonly region: string; readonly eventId: string; readonly recordedAt: number }): void };
  /** The control region's changes recorded in other regions, and when each account topic has been read up to where it stood. */
  readonly control?: { apply(event: ControlRegionChanged): void; caughtUp(source: string): void };
}

/** The stream a region records a revocation of another region's family in: `revocations-<familyId>`. */
const remoteRevocationStream = /^revocations-/;

/** What the revocation topic carries into the projection: rotations, revocations and cuts. */
const projectionTypes = ['TokenRotated', 'TokenRevoked', ...tokenCutEventTypes] as const;

/**
 * Routes one mirrored event to the read models. Each topic feeds what it is the source of, so an
 * event that travels on both (a cut, a permission change) is applied to each model once: cuts
 * reach the projection from the revocation topic and the accounts from the account topic.
 * Every apply is idempotent and order-insensitive across families (highest generation wins,
 * revoked is terminal), so redeliveries by the relay or MirrorMaker 2 change nothing.
 * True when a read model of this process took the event; false when none here has a use for it.
 */
export function routeMirroredEvent(feedEvent: FeedEvent, mirrored: MirroredTopic, targets: MirrorTargets): boolean {
  const { event } = feedEvent;
  if (mirrored.carries === 'accounts') {
    if (event.type === 'ControlRegionChanged') {
      targets.control?.apply(event);
      return targets.control !== undefined;
    }
    if (!isEventOf(accountEventTypes, event) || !targets.accounts) return false;
    targets.accounts.apply(event);
    return true;
  }
  if (mirrored.carries === 'families') {
    if (!isEventOf(familyCheckEventTypes, event) || !targets.families) return false;
    targets.families.apply(event);
    return true;
  }
  if (isEventOf(signingKeyEventTypes, event)) {
    targets.keys?.apply(event);
    return targets.keys !== undefined;
  }
  if (isEventOf(projectionTypes, event)) {
    // First the refresh decisions, then the verifier: once a token is refused here, so is a refresh of its family.
    if (event.type === 'TokenRevoked' && remoteRevocationStream.test(feedEvent.stream)) targets.remoteRevocations?.apply(event, mirrored.region);
    targets.projection?.apply(event);
    if (event.type !== 'TokenRotated') targets.signals?.receive(event, { region: mirrored.region, eventId: feedEvent.eventId, recordedAt: feedEvent.recordedAt });
    return targets.projection !== undefined || targets.remoteRevocations !== undefined || targets.signals !== undefined;
  }
  return false;
}
