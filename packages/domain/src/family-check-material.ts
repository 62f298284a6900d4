import { rejectsUntilOf, type FamilyEvent } from '@tessera/contracts';

/**
 * What a region knows of a family homed in another region, from that region's family events
 * (`tessera.families`, mirrored): enough to check that a refresh token presented to revoke the
 * family is its current one, and to see the family end. It is never ahead of the home region:
 * it only ever holds what the home region's log held a mirror's delay ago.
 */
export interface FamilyCheck {
  readonly familyId: string;
  readonly accountId: string;
  /** The newest generation seen. */
  readonly generation: number;
  /** The keyed hash of that generation's refresh token, and the key that made it; absent when only a revocation was seen. */
  readonly refreshTokenHash: string | undefined;
  readonly hashingKey: string | undefined;
  readonly refreshExpiresAt: number;
  readonly accessExpiresAt: number;
  /** The last expiry among the access tokens of every generation seen. */
  readonly lastAccessExpiresAt: number;
  /** A revocation of the family was seen: terminal. */
  readonly revoked: boolean;
}

interface Entry {
  check: FamilyCheck;
  forgetAt: number;
}

/**
 * Family id → its check material. Applying is a max() of the generation, and a revocation is
 * terminal, so duplicates, redeliveries and a revocation that overtakes a rotation (the local log
 * and a mirrored topic are two paths) change nothing. An entry is forgotten once its refresh
 * token and every access token it knows of have expired (plus clock skew): memory follows other
 * regions' live families, not their history.
 */
export class FamilyCheckMaterial {
  private readonly entries = new Map<string, Entry>();
  private readonly clockSkewSeconds: number;

  constructor(options: { readonly clockSkewSeconds?: number } = {}) {
    this.clockSkewSeconds = options.clockSkewSeconds ?? 60;
  }

  get size(): number {
    return this.entries.size;
  }

  get(familyId: string): FamilyCheck | undefined {
    return this.entries.get(familyId)?.check;
  }

  apply(event: FamilyEvent): void {
    const entry = this.entries.get(event.familyId);
    const before = entry?.check;
    let check: FamilyCheck;
    if (event.type === 'TokenRevoked') {
      check = {
        familyId: event.familyId,
        accountId: event.accountId,
        generation: Math.max(before?.generation ?? 0, event.generation),
        refreshTokenHash: before?.refreshTokenHash,
        hashingKey: before?.hashingKey,
        refreshExpiresAt: before?.refreshExpiresAt ?? 0,
        accessExpiresAt: Math.max(before?.accessExpiresAt ?? 0, event.accessExpiresAt),
        lastAccessExpiresAt: Math.max(before?.lastAccessExpiresAt ?? 0, rejectsUntilOf(event)),
        revoked: true,
      };
    } else {
      const lastAccessExpiresAt = Math.max(before?.lastAccessExpiresAt ?? 0, event.accessExpiresAt, event.type === 'TokenRotated' ? rejectsUntilOf(event) : 0);
      const refreshExpiresAt = Math.max(before?.refreshExpiresAt ?? 0, event.refreshExpiresAt);
      // Only a newer generation replaces the hash; a revocation stays, whatever arrives after it.
      check =
        before === undefined || event.generation > before.generation
          ? {
              familyId: event.familyId,
              accountId: event.accountId,
              generation: event.generation,
              refreshTokenHash: event.refreshTokenHash,
              hashingKey: event.hashingKey,
              refreshExpiresAt,
              accessExpiresAt: Math.max(before?.accessExpiresAt ?? 0, event.accessExpiresAt),
              lastAccessExpiresAt,
              revoked: before?.revoked ?? false,
            }
          : { ...before, refreshExpiresAt, lastAccessExpiresAt };
    }
    const forgetAt = Math.max(check.refreshExpiresAt, check.lastAccessExpiresAt) + this.clockSkewSeconds;
    if (entry === undefined) {
      this.entries.set(event.familyId, { check, forgetAt });
      return;
    }
    entry.check = check;
    if (forgetAt > entry.forgetAt) {
      entry.forgetAt = forgetAt;
      // To the back: Map order follows when entries were last extended, which forgetExpired() scans.
      this.entries.delete(event.familyId);
      this.entries.set(event.familyId, entry);
    }
  }

  /**
   * Drops what can check nothing any more; returns how many went. Scans from the front and stops at
   * the first entry still needed, so its cost follows what it drops.
   */
  forgetExpired(nowSeconds: number): number {
    let forgotten = 0;
    for (const [familyId, entry] of this.entries) {
      if (entry.forgetAt > nowSeconds) break;
      this.entries.delete(familyId);
      forgotten += 1;
    }
    return forgotten;
  }
}
