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

  /** Expired entries first; if none, the oldest (Map order is insertion order). */
  private evict(nowSeconds: number): void {
    for (const [token, entry] of this.entries) if (entry.claims.exp <= nowSeconds) this.entries.delete(token);
    if (this.entries.size < this.maxEntries) return;
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }
}
