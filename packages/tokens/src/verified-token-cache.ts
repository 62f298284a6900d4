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
  /**
   * Keyed by the token's signature part, not the whole token: each request brings the token as a
   * new string, and a Map hashes a new string's every character on lookup. The signature is
   * about 86 of a token's ~600 characters; the whole token is then compared to the entry's, so
   * a hit still means exactly this token.
   */
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly keys: PublicKeySet,
    private readonly maxEntries = 50_000,
  ) {}

  verify(token: string, nowSeconds: number): SignatureVerification {
    const hit = this.cached(token, nowSeconds);
    if (hit !== undefined) return hit;
    const verified = verifySignature(token, this.keys, nowSeconds);
    if (verified.ok && verified.claims.exp > nowSeconds) {
      const signature = signaturePart(token);
      // A token that verified has one canonical signature part (verifySignature), so the key
      // below names it alone; a different token under the same key simply replaces it.
      if (this.entries.size >= this.maxEntries && !this.entries.has(signature)) this.evict(nowSeconds);
      this.entries.set(signature, { token, verified });
    }
    return verified;
  }

  /**
   * The cached verification of exactly this token, if it is still good now; undefined otherwise
   * (never verified, expired, or its key is no longer known: then the entry goes).
   */
  cached(token: string, nowSeconds: number): Extract<SignatureVerification, { ok: true }> | undefined {
    const signature = signaturePart(token);
    const hit = this.entries.get(signature);
    if (hit === undefined || hit.token !== token) return undefined;
    if (hit.verified.claims.exp > nowSeconds && this.keys.find(hit.verified.kid, nowSeconds)) return hit.verified;
    this.entries.delete(signature);
    return undefined;
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
    for (const [signature, entry] of this.entries) {
      if (budget === 0 || entry.verified.claims.exp > nowSeconds) break;
      this.entries.delete(signature);
      budget -= 1;
    }
    if (this.entries.size < this.maxEntries) return;
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }
}

/**
 * The last 86 characters: an ES256 signature is 64 bytes, 86 base64url characters, and nothing
 * else verifies, so for every token the cache can hold this is its signature part. Taken by
 * length rather than by searching for the last dot, which V8 does in a slow runtime call.
 */
function signaturePart(token: string): string {
  return token.length > signatureLength ? token.slice(token.length - signatureLength) : token;
}
const signatureLength = 86;

interface Entry {
  readonly token: string;
  /** Answered as is on a hit: no copy per request. */
  readonly verified: Extract<SignatureVerification, { ok: true }>;
}

/** More than one, so a cache that filled while idle drains its expired front faster than it refills. */
const expiredDropsPerInsert = 4;
