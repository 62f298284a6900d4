import type { SecretHashers } from '@tessera/tokens';
import { sameKeyedHash } from '@tessera/domain';

/** How long one nonce window lasts; a nonce is taken in its window and the next, so for 120 to 240 seconds. */
export const dpopNonceWindowSeconds = 120;

/**
 * The token endpoint's DPoP nonces (RFC 9449 section 8), without state: a nonce names its time
 * window and carries a keyed hash of it, made with the log's current secret-hashing key. Every
 * replica of a region, and every region, holds that key (docs/decisions/0015), so a nonce one
 * process gave out is taken by any other; nothing is stored or shared per nonce. A rotation of the
 * key makes the nonces out before it fail once: the client is asked again with use_dpop_nonce.
 */
export class DpopNonces {
  constructor(
    private readonly hashers: Pick<SecretHashers, 'current'>,
    /** Epoch seconds. */
    private readonly now: () => number,
  ) {}

  /** The nonce to give out now, in the DPoP-Nonce header. */
  current(): string {
    return this.nonceOf(Math.floor(this.now() / dpopNonceWindowSeconds));
  }

  /** Whether a proof's nonce is one this server gave out in this window or the one before. */
  accepts(nonce: string | undefined): boolean {
    if (nonce === undefined || nonce.length > 64) return false;
    const window = Number(nonce.slice(0, nonce.indexOf('.')));
    const current = Math.floor(this.now() / dpopNonceWindowSeconds);
    if (!Number.isSafeInteger(window) || (window !== current && window !== current - 1)) return false;
    return sameKeyedHash(this.nonceOf(window), nonce);
  }

  private nonceOf(window: number): string {
    // A label keeps these hashes apart from the secrets the same key hashes.
    return `${window}.${this.hashers.current().hash(`tessera dpop nonce ${window}`).slice(0, 22)}`;
  }
}
