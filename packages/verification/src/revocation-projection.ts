import type { TokenRevoked, TokenRotated } from '@tessera/contracts';

/**
 * family id → lowest valid generation (or revoked). An access token lives at most its TTL,
 * so an entry is forgotten once every token it could reject has expired (plus clock skew):
 * memory follows the revocation rate, not history.
 *
 * Each entry is one number: forgetAt (epoch seconds) × 2^22 + lowest valid generation,
 * with 2^22 − 1 meaning revoked. That stays exact below 2^53 and keeps an entry to a Map
 * slot, a short key string and a heap number. Applying is a max(): duplicates and
 * out-of-order delivery (Kafka partitions, replays) change nothing.
 */
const generationSpan = 2 ** 22;
const revokedMarker = generationSpan - 1;

export interface RevocationProjectionOptions {
  /** Seconds an entry is kept past the expiry of the newest token it covers. */
  readonly clockSkewSeconds?: number;
}

export type RevocationEvent = TokenRotated | TokenRevoked;

export class RevocationProjection {
  private readonly entries = new Map<string, number>();
  private readonly clockSkewSeconds: number;

  constructor(options: RevocationProjectionOptions = {}) {
    this.clockSkewSeconds = options.clockSkewSeconds ?? 60;
  }

  get size(): number {
    return this.entries.size;
  }

  apply(event: RevocationEvent): void {
    const previous = this.entries.get(event.familyId);
    const previousForgetAt = previous === undefined ? 0 : Math.floor(previous / generationSpan);
    const previousLow = previous === undefined ? 0 : previous % generationSpan;
    const forgetAt = Math.max(previousForgetAt, event.accessExpiresAt + this.clockSkewSeconds);
    let low: number;
    if (event.type === 'TokenRevoked' || previousLow === revokedMarker) low = revokedMarker;
    else low = Math.max(previousLow, Math.min(event.generation, revokedMarker - 1));
    // Re-insert so Map order follows the latest change: forgetExpired() then scans from the front.
    if (previous !== undefined) this.entries.delete(event.familyId);
    this.entries.set(event.familyId, forgetAt * generationSpan + low);
  }

  /** True when a token of this family and generation has been rotated away or revoked. */
  isRejected(familyId: string, generation: number): boolean {
    const entry = this.entries.get(familyId);
    if (entry === undefined) return false;
    const low = entry % generationSpan;
    return low === revokedMarker || generation < low;
  }

  /** Drops entries that can no longer reject an unexpired token. Returns how many went. */
  forgetExpired(nowSeconds: number): number {
    let forgotten = 0;
    for (const [familyId, entry] of this.entries) {
      if (Math.floor(entry / generationSpan) > nowSeconds) break;
      this.entries.delete(familyId);
      forgotten += 1;
    }
    return forgotten;
  }
}
