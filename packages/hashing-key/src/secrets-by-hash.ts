import { sameKeyedHash } from '@tessera/domain';
import { SecretHashingKeyUnavailable, type SecretHashers } from '@tessera/tokens';

/**
 * Bearer secrets known only by their keyed hash (admin tokens, Shared Signals receiver tokens),
 * each filed under the fingerprint of the secret-hashing key that made its hash (undefined: the
 * log's first key), so that a rotation of that key breaks none of them. A presented secret is
 * hashed under each key that made an active one and looked up by that hash; the stored hash is
 * then compared in constant time, so what decides is never a byte-by-byte comparison of secrets.
 */
export class SecretsByHash<T> {
  /** Hashing key fingerprint → hash → what the secret stands for. */
  readonly #byKey = new Map<string | undefined, Map<string, { readonly hash: string; readonly value: T }>>();
  readonly #byId = new Map<string, { readonly key: string | undefined; readonly hash: string }>();

  constructor(private readonly hashers: SecretHashers) {}

  /** Files the secret `id` by its hash, made with the key `hashingKey` names. */
  add(id: string, hashingKey: string | undefined, hash: string, value: T): void {
    this.remove(id);
    const hashes = this.#byKey.get(hashingKey) ?? new Map<string, { readonly hash: string; readonly value: T }>();
    hashes.set(hash, { hash, value });
    this.#byKey.set(hashingKey, hashes);
    this.#byId.set(id, { key: hashingKey, hash });
  }

  /** Forgets the secret `id` (revoked); nothing when it is not known. */
  remove(id: string): void {
    const filed = this.#byId.get(id);
    if (filed === undefined) return;
    const hashes = this.#byKey.get(filed.key);
    hashes?.delete(filed.hash);
    if (hashes?.size === 0) this.#byKey.delete(filed.key);
    this.#byId.delete(id);
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  get size(): number {
    return this.#byId.size;
  }

  /**
   * What the presented secret stands for, or undefined when no active one matches. A key that is
   * not at hand makes the answer unknown (SecretHashingKeyUnavailable: a 503, not a 401) unless
   * another key finds the secret.
   */
  find(presented: string): T | undefined {
    let unavailable: SecretHashingKeyUnavailable | undefined;
    for (const [key, hashes] of this.#byKey) {
      let presentedHash: string;
      try {
        presentedHash = this.hashers.hashUnder(key, presented);
      } catch (error) {
        if (!(error instanceof SecretHashingKeyUnavailable)) throw error;
        unavailable = error;
        continue;
      }
      const found = hashes.get(presentedHash);
      if (found !== undefined && sameKeyedHash(found.hash, presentedHash)) return found.value;
    }
    if (unavailable) throw unavailable;
    return undefined;
  }
}
