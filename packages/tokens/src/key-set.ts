import type { KeyObject } from 'node:crypto';
import type { SigningKeyEvent } from '@tessera/contracts';
import { publicKeyFromJwk, type PublicJwk } from './signing-key.js';

/**
 * The public keys a token may be verified with, built from SigningKeyPublished/Retired
 * events. A retired key stays until every token it signed has expired.
 */
export interface KnownKey {
  readonly kid: string;
  readonly publicJwk: PublicJwk;
  readonly publicKey: KeyObject;
  readonly publishedAt: number;
  /** Epoch seconds; undefined while the key is current. */
  readonly retainUntil?: number;
}

export class PublicKeySet {
  private readonly keys = new Map<string, KnownKey>();

  apply(event: SigningKeyEvent): void {
    if (event.type === 'SigningKeyPublished') {
      if (this.keys.has(event.kid)) return;
      this.keys.set(event.kid, { kid: event.kid, publicJwk: event.publicJwk, publicKey: publicKeyFromJwk(event.publicJwk), publishedAt: event.at });
      return;
    }
    const key = this.keys.get(event.kid);
    if (key) this.keys.set(event.kid, { ...key, retainUntil: event.retainUntil });
  }

  /** A key usable for verification at `nowSeconds`, or undefined. */
  find(kid: string, nowSeconds: number): KnownKey | undefined {
    const key = this.keys.get(kid);
    if (!key) return undefined;
    return key.retainUntil !== undefined && key.retainUntil <= nowSeconds ? undefined : key;
  }

  /** RFC 7517 JWK Set: current and retired-but-unexpired keys. */
  jwks(nowSeconds: number): { keys: (PublicJwk & { kid: string; alg: 'ES256'; use: 'sig' })[] } {
    const keys = [...this.keys.values()]
      .filter((key) => key.retainUntil === undefined || key.retainUntil > nowSeconds)
      .map((key) => ({ ...key.publicJwk, kid: key.kid, alg: 'ES256' as const, use: 'sig' as const }));
    return { keys };
  }

  /** The newest key that is not retired: the one new tokens are signed with. */
  currentKid(): string | undefined {
    let current: KnownKey | undefined;
    for (const key of this.keys.values()) if (key.retainUntil === undefined) current = key;
    return current?.kid;
  }

  /** Every key read, retired ones included (until forgotten), in the order they were published: for the admin console's key list. */
  known(): readonly KnownKey[] {
    return [...this.keys.values()];
  }

  get size(): number {
    return this.keys.size;
  }
}
