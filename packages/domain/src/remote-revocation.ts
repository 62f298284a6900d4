import type { TokenRevoked } from '@tessera/contracts';
import { presentedMatches, type PresentedSecret } from './constant-time.js';
import { DomainError } from './errors.js';
import type { FamilyCheck } from './family-check-material.js';

/**
 * A revoke of a family homed in another region, decided where it arrived while the home region is
 * out of reach (docs/decisions/0018), from the check material the home region's family events
 * brought here. It revokes only what it can prove: the presented refresh token is the current one
 * of the newest generation this region has seen, and unexpired. Anything it cannot prove (a family
 * not seen yet, a token newer than what arrived, or one that was never issued) is left to the home
 * region (ERR_REFRESH_TOKEN_UNPROVEN, a 503): only it can tell those apart, and a false 200 would
 * let anyone who saw one access token (its `fid` claim) end a family from any region.
 *
 * The material is never ahead of the home region, so the generation revoked here was issued there;
 * the revocation is terminal for the whole family, every generation included, so it commutes with
 * a rotation the home region makes meanwhile.
 */
export function decideRemoteRevocation(check: FamilyCheck | undefined, presented: PresentedSecret, now: number): TokenRevoked {
  if (check === undefined) throw new DomainError('ERR_REFRESH_TOKEN_UNPROVEN', 'no check material for this family here yet');
  // Revoked is terminal: the home region answers any token of a revoked family so.
  if (check.revoked) throw new DomainError('ERR_REFRESH_TOKEN_REVOKED', 'refresh token was revoked');
  const current = check.refreshTokenHash === undefined ? undefined : { hash: check.refreshTokenHash, hashingKey: check.hashingKey };
  // Hash before expiry, as at home: a guessed token learns nothing about the family's times.
  if (current === undefined || !presentedMatches(current, presented)) throw new DomainError('ERR_REFRESH_TOKEN_UNPROVEN', 'the presented refresh token is not the current one this region has seen');
  if (now >= check.refreshExpiresAt) throw new DomainError('ERR_REFRESH_TOKEN_EXPIRED', 'refresh token has expired');
  return {
    type: 'TokenRevoked',
    v: 1,
    familyId: check.familyId,
    accountId: check.accountId,
    generation: check.generation,
    revokedAt: now,
    accessExpiresAt: check.accessExpiresAt,
    rejectsUntil: check.lastAccessExpiresAt,
  };
}
