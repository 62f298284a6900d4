import { randomToken } from './identifiers.js';

/**
 * Opaque refresh token that names its family, so the issuer loads the family stream
 * directly, with no index from token to family: `tsr_<familyId>.<secret>`.
 */
const prefix = 'tsr_';
const familyIdPattern = /^[A-Za-z0-9_-]{22}$/;
const secretPattern = /^[A-Za-z0-9_-]{43}$/;

export function newRefreshToken(familyId: string): string {
  return `${prefix}${familyId}.${randomToken(32)}`;
}

/** The family a refresh token names, or undefined when it is not one of ours. */
export function familyOfRefreshToken(refreshToken: string): string | undefined {
  if (!refreshToken.startsWith(prefix)) return undefined;
  const [familyId, secret, extra] = refreshToken.slice(prefix.length).split('.');
  if (extra !== undefined || !familyId || !secret) return undefined;
  return familyIdPattern.test(familyId) && secretPattern.test(secret) ? familyId : undefined;
}
