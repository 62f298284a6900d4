import type { AccessTokenClaims } from '@tessera/contracts';
import type { PublicKeySet } from './key-set.js';
import { verifySignature, type SignatureVerification } from './access-token.js';

/**
 * Clients reuse one access token for up to an hour, so the ECDSA verify — most of a protected
 * request's cost — is done once per token, not once per request. Only successes are kept
 * (a flood of forged tokens cannot evict good ones), entries leave once their token has
 * expired, and a hit still requires the signing key to be known now: retiring a key past its
 * retention ends its tokens' hits at once. Issuer, audience, expiry and revocation are still
 * checked by the caller on every request.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, { kid: string; claims: AccessTokenClaims }>();

  constructor(
    private readonly keys: PublicKeySet,
    private readonly maxEntries = 50_000,
  ) {}

  verify(token: string, nowSeconds: number): SignatureVerification {
    const hit = this.entries.get(token);
    if (hit) {
      if (hit.claims.exp > nowSeconds && this.keys.find(hit.kid, nowSeconds)) return { ok: true, ...hit };
      this.entries.delete(token);
    }
    const verified = verifySignature(token, this.keys, nowSeconds);
    if (verified.ok && verified.claims.exp > nowSeconds) {
      if (this.entries.size >= this.maxEntries) this.evict(nowSeconds);
      this.entries.set(token, { kid: verified.kid, claims: verified.claims });
    }
    return verified;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * O(1) per insert, whatever the cache holds: entries sit in insertion order, and tokens expire
   * roughly in that order, so the expired ones are at the front. Drop at most a few of those,
   * then the oldest entry if the cache is still full. (Scanning the whole cache for expired
   * entries made every insert into a cache full of live tokens cost 50,000 steps.)
   */
  private evict(nowSeconds: number): void {
    let budget = expiredDropsPerInsert;
    for (const [token, entry] of this.entries) {
      if (budget === 0 || entry.claims.exp > nowSeconds) break;
      this.entries.delete(token);
      budget -= 1;
    }
    if (this.entries.size < this.maxEntries) return;
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }
}

/** More than one, so a cache that filled while idle drains its expired front faster than it refills. */
const expiredDropsPerInsert = 4;
