import { sign } from 'node:crypto';
import type { SigningKey } from '@tessera/tokens';
import type { SetClaims } from './set-mapping.js';

/** What a SET is signed with: the issuer's signing keyring, whose current key is in the published JWKS. */
export interface SetKeyring {
  current(): SigningKey;
  /** Epoch seconds the current key was published at: a receiver may not have fetched it yet for a while after. */
  currentPublishedAt(): number | undefined;
}

/** RFC 8417's media type, as the header's `typ` (section 2.3). */
export const setType = 'secevent+jwt';

/**
 * Signs a SET with the keyring's current key, at delivery time: a SET delivered again after a key
 * rotation is signed with the new key, which the JWKS publishes, so it still verifies.
 */
export function signSet(claims: SetClaims, keyring: SetKeyring): string {
  const key = keyring.current();
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: setType, kid: key.kid })).toString('base64url');
  const signingInput = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = sign('sha256', Buffer.from(signingInput), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}
