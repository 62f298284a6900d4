import { familyOfRefreshToken, homeRegionOfFamily } from '@tessera/tokens';

/** The regions as this issuer knows them (TESSERA_REGION, TESSERA_BARE_FAMILY_REGION, TESSERA_PEER_REGIONS). */
export interface RegionMap {
  readonly own?: string | undefined;
  /** Where bare (pre-region) family ids live; this issuer's own region when unset. */
  readonly bareFamilies?: string | undefined;
  /** Peer region name → its issuer's origin (`https://host:port`). */
  readonly peers: Readonly<Record<string, string>>;
}

/** Where a refresh or revoke is answered. */
export type HomeDecision =
  | { readonly kind: 'local' }
  | { readonly kind: 'forward'; readonly region: string; readonly origin: string }
  /** A region prefix no peer is configured for: as invalid as any unknown refresh token (401). */
  | { readonly kind: 'unknown-region'; readonly region: string };

/**
 * Only a family's home region appends to its stream (docs/multi-region.md), so a token of a family
 * homed elsewhere goes there. A request that was already forwarded is answered here whatever it
 * names: forwarding it again could loop between two issuers that disagree about a home. A string
 * that is not a refresh token is answered here too, where it is refused like any other.
 */
export function decideHome(refreshToken: string, regions: RegionMap, alreadyForwarded: boolean): HomeDecision {
  const familyId = familyOfRefreshToken(refreshToken);
  return familyId === undefined ? { kind: 'local' } : decideHomeOfFamily(familyId, regions, alreadyForwarded);
}

/** decideHome for a family id read from elsewhere than a refresh token (an access token's `fid`). */
export function decideHomeOfFamily(familyId: string, regions: RegionMap, alreadyForwarded: boolean): HomeDecision {
  if (alreadyForwarded) return { kind: 'local' };
  const home = homeRegionOfFamily(familyId) ?? regions.bareFamilies ?? regions.own;
  if (home === undefined || home === regions.own) return { kind: 'local' };
  const origin = regions.peers[home];
  return origin === undefined ? { kind: 'unknown-region', region: home } : { kind: 'forward', region: home, origin };
}

/** Whether a family id is homed in `region` (a bare id is homed in `bareFamilies`, else in `region` itself). */
export function familyHomedIn(familyId: string, region: string, bareFamilies?: string): boolean {
  return (homeRegionOfFamily(familyId) ?? bareFamilies ?? region) === region;
}
