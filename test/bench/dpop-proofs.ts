import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';

/**
 * A DPoP (RFC 9449) key and a fresh proof for each request, made synchronously on node:crypto: the
 * load generator's setupRequest is synchronous, and a proof per request must cost the client little
 * beside the server's work it measures. The proofs are what openid-client sends: ES256, a
 * random jti, the request's htm and htu, and ath when a token goes with it.
 */
export interface DpopProofMaker {
  /** A proof for one request; `accessToken` adds its `ath`. */
  proof(method: string, url: string, accessToken?: string): string;
}

export function dpopProofMaker(): DpopProofMaker {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  const header = Buffer.from(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } })).toString('base64url');
  return {
    proof(method, url, accessToken) {
      const claims = {
        jti: randomUUID(),
        htm: method,
        htu: url,
        iat: Math.floor(Date.now() / 1000),
        ...(accessToken === undefined ? {} : { ath: createHash('sha256').update(accessToken).digest('base64url') }),
      };
      const signingInput = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return `${signingInput}.${signed(privateKey, signingInput)}`;
    },
  };
}

function signed(privateKey: KeyObject, signingInput: string): string {
  return sign('sha256', Buffer.from(signingInput), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
}
