import { timingSafeEqual } from 'node:crypto';

/** Keyed hashes are compared in constant time so a timing side channel cannot guess them byte by byte. */
export function sameKeyedHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A stored keyed hash and the fingerprint of the key that made it (undefined: the log's first key). */
export interface KeyedHash {
  readonly hash: string;
  readonly hashingKey: string | undefined;
}

/**
 * A secret a client presented, as the domain sees it: its keyed hash under the key a stored hash
 * names. Hashing needs the key, which stays outside the domain: the command hands this in.
 */
export type PresentedSecret = (hashingKey: string | undefined) => string;

/** Whether a presented secret is the one a stored hash was made from, compared in constant time under the stored hash's own key. */
export function presentedMatches(stored: KeyedHash, presented: PresentedSecret): boolean {
  return sameKeyedHash(stored.hash, presented(stored.hashingKey));
}
