import { timingSafeEqual } from 'node:crypto';

/** Keyed hashes are compared in constant time so a timing side channel cannot guess them byte by byte. */
export function sameKeyedHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
