import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import type { AccessTokenClaims } from '@tessera/contracts';
import { accessTokenHash, openSigningKeyFolder, signAccessToken, signingKeyFromJwk } from '@tessera/tokens';

/**
 * DPoP (RFC 9449) for tests of resource servers: a client's proof key, and a token the deployment
 * issued, bound to that key. The issuer's own DPoP grant is tested where it is built; here the
 * token is the one get-oauth-token answered (its family, so revocations reach it), with `cnf.jkt`
 * added and signed again with the deployment's signing key from its data folder.
 */
export interface DpopClient {
  /** The RFC 7638 thumbprint of the client's public key: what a bound token's `cnf.jkt` holds. */
  readonly jkt: string;
  /** A fresh proof (new jti, iat now) for one request, carrying the token's `ath`. */
  proof(method: string, url: string, accessToken: string): Promise<string>;
}

export async function dpopClient(): Promise<DpopClient> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  return {
    jkt: await calculateJwkThumbprint(jwk as JWK, 'sha256'),
    proof: (method, url, accessToken) =>
      new SignJWT({ jti: crypto.randomUUID(), htm: method, htu: url, iat: Math.floor(Date.now() / 1000), ath: accessTokenHash(accessToken) })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .sign(privateKey),
  };
}

/** The token, bound to `jkt`: the same claims and kid, signed again by the deployment's key (TESSERA_KEYS_DIR unset: `keys/` in its data folder). */
export function boundToKey(token: string, jkt: string, dataDir: string): string {
  const [encodedHeader, encodedClaims] = token.split('.');
  // The deployment's own token: a JWS header with its kid and a claims object, as it signed them.
  const { kid } = JSON.parse(Buffer.from(encodedHeader!, 'base64url').toString('utf8')) as { kid: string };
  const claims = JSON.parse(Buffer.from(encodedClaims!, 'base64url').toString('utf8')) as AccessTokenClaims;
  const privateJwk = openSigningKeyFolder(dataDir).loadPrivateKey(kid);
  if (privateJwk === undefined) throw new Error(`no private key ${kid} in ${dataDir}/keys`);
  return signAccessToken({ ...claims, cnf: { jkt } }, signingKeyFromJwk(kid, privateJwk));
}
