import { timeOrderedIdBytes } from '@tessera/contracts';
import { randomToken } from './identifiers.js';

/**
 * Opaque refresh token that names its family, so the issuer loads the family stream
 * directly, with no index from token to family: `tsr_<familyId>.<secret>`.
 *
 * A family id is 22 base64url characters, prefixed with its home region when the issuer that made
 * it had TESSERA_REGION set: `<region>_<22 chars>` (docs/multi-region.md). Ids made before regions
 * are bare. The 22 characters are 16 bytes: a UUID of version 7 since ids became time-ordered, 16
 * random bytes before; both read the same. The random part is fixed-length, so a region prefix is told apart by length even though
 * `_` is base64url too: a bare id is exactly 22 characters, a regional one at least 24.
 */
const prefix = 'tsr_';
/** Short lowercase alphanumerics: TESSERA_REGION's own rule, shared with the config. */
export const regionNamePattern = /^[a-z0-9]{1,16}$/;
const familyIdPattern = /^(?:([a-z0-9]{1,16})_)?[A-Za-z0-9_-]{22}$/;
const secretPattern = /^[A-Za-z0-9_-]{43}$/;

const familyIdBytes = Buffer.alloc(16);

/**
 * A new family id, homed in `region` when one is given (a bare id otherwise, today's shape). Its
 * bytes are a UUID of version 7 (RFC 9562): the time in milliseconds, then random bits. A family id names a stream, and every store indexes streams by name: ids made close in
 * time sit close in that index (and in the audit index's family index), so an issuance adds to
 * pages already in memory rather than to a random page of an index that grows with history
 * (docs/decisions/0019). A family id is public (the `fid` claim) and never a secret: the refresh
 * token's 32 random bytes are.
 */
export function newFamilyId(region?: string): string {
  const id = timeOrderedIdBytes(familyIdBytes).toString('base64url');
  return region === undefined ? id : `${region}_${id}`;
}

export function newRefreshToken(familyId: string): string {
  return `${prefix}${familyId}.${randomToken(32)}`;
}

/** The family a refresh token names, or undefined when it is not one of ours. */
export function familyOfRefreshToken(refreshToken: string): string | undefined {
  if (!refreshToken.startsWith(prefix)) return undefined;
  const [familyId, secret, extra] = refreshToken.slice(prefix.length).split('.');
  if (extra !== undefined || !familyId || !secret) return undefined;
  return familyIdPattern.test(familyId) && secretPattern.test(secret) ? familyId : undefined;
}

/**
 * The home region a family id names: its prefix, or undefined for a bare id (one made before
 * regions, homed where TESSERA_BARE_FAMILY_REGION says). Undefined too for what is not a family id.
 */
export function homeRegionOfFamily(familyId: string): string | undefined {
  return familyIdPattern.exec(familyId)?.[1];
}
