import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';
import { z } from 'zod';

/**
 * ES256 (P-256) signing keys. Chosen for speed: node:crypto signs P-256 about 1.4 times and
 * verifies it about 1.9 times as fast as Ed25519 (docs/decisions/0002).
 */
export interface PublicJwk {
  readonly kty: 'EC';
  readonly crv: 'P-256';
  readonly x: string;
  readonly y: string;
}

export interface PrivateJwk extends PublicJwk {
  readonly d: string;
}

/**
 * A private P-256 JWK read from outside the type system: a key file, or node:crypto's export (typed
 * with every JWK member optional). Members in node's order, so a key file's text is what it was.
 */
const PrivateJwkShape = z.object({ kty: z.literal('EC'), x: z.string(), y: z.string(), crv: z.literal('P-256'), d: z.string() });

export function parsePrivateJwk(value: unknown): PrivateJwk {
  return PrivateJwkShape.parse(value);
}

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicJwk: PublicJwk;
}

export async function generateSigningKey(): Promise<{ kid: string; privateJwk: PrivateJwk }> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const privateJwk = parsePrivateJwk(privateKey.export({ format: 'jwk' }));
  return { kid: await thumbprint(publicPart(privateJwk)), privateJwk };
}

export function signingKeyFromJwk(kid: string, privateJwk: PrivateJwk): SigningKey {
  return { kid, privateKey: createPrivateKey({ key: { ...privateJwk }, format: 'jwk' }), publicJwk: publicPart(privateJwk) };
}

export function publicKeyFromJwk(publicJwk: PublicJwk): KeyObject {
  return createPublicKey({ key: { ...publicJwk }, format: 'jwk' });
}

export function publicPart(jwk: PublicJwk): PublicJwk {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
}

/** RFC 7638 thumbprint as the kid: stable, derived, and unique per key. */
function thumbprint(jwk: PublicJwk): Promise<string> {
  return calculateJwkThumbprint({ ...jwk }, 'sha256');
}
