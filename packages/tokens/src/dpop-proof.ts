import { constants, createHash, createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { isJsonObject, jsonObjectOf } from './jose-segment.js';

/**
 * RFC 9449 (DPoP) proofs, checked the way access tokens are here: on node:crypto, synchronously,
 * since a resource server checks one on every request. The header carries the public key; the
 * proof is good for one method and URL, within a short window, once.
 */

/** The algorithms a proof may be signed with: asymmetric only (RFC 9449 section 4.2). */
export const dpopSigningAlgorithms = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const;
export type DpopSigningAlgorithm = (typeof dpopSigningAlgorithms)[number];

/** How long after its `iat` a proof is taken (plus the clock skew); RFC 9449 section 11.1 asks for "a few seconds" to minutes. */
export const dpopProofLifetimeSeconds = 60;

/** A proof is small: a header with one public key and a handful of claims. RSA-4096 fits well inside. */
const maxProofLength = 4096;
const maxJtiLength = 128;
const base64url = /^[A-Za-z0-9_-]+$/;

export type DpopRefusal = 'ERR_DPOP_PROOF_INVALID' | 'ERR_DPOP_NONCE_REQUIRED';

export type DpopProofResult =
  | { readonly ok: true; /** RFC 7638 thumbprint of the proof's key: what `cnf.jkt` holds. */ readonly jkt: string }
  | { readonly ok: false; readonly code: DpopRefusal; /** For the client: which check failed, naming nothing secret. */ readonly description: string };

export interface DpopProofCheck {
  /** The request's method, upper case. */
  readonly method: string;
  /** The request's URL as the client addressed it (scheme, host, path); query and fragment are ignored. */
  readonly url: string;
  /** Epoch seconds. */
  readonly now: number;
  readonly clockSkewSeconds: number;
  /** The access token the request presents: the proof must carry its hash as `ath` (RFC 9449 section 4.3, point 11). */
  readonly accessToken?: string;
  /** Where nonces are required: whether the proof's `nonce` is one this server gave out and still takes. */
  readonly acceptsNonce?: (nonce: string | undefined) => boolean;
  /** Where each proof's `jti` is spent, once. */
  readonly spentIds: SpentProofIds;
}

const allowed: ReadonlySet<string> = new Set(dpopSigningAlgorithms);
const privateMembers = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * RFC 9449 section 4.3: one JWT with `typ` dpop+jwt, an allowed asymmetric `alg`, a public `jwk`
 * whose signature verifies, `htm` and `htu` of this request, an `iat` within the window, a `jti`
 * not seen before, `ath` when a token is presented, and `nonce` when nonces are required.
 */
export function checkDpopProof(proof: string, check: DpopProofCheck): DpopProofResult {
  if (proof.length > maxProofLength) return refuse('the DPoP proof is too long');
  const parts = proof.split('.');
  const [encodedHeader, encodedPayload, encodedSignature] = parts;
  if (parts.length !== 3 || !encodedHeader || !encodedPayload || !encodedSignature || !base64url.test(encodedHeader) || !base64url.test(encodedPayload) || !base64url.test(encodedSignature)) {
    return refuse('the DPoP proof is not a compact JWS');
  }
  const proofKey = proofKeyOf(encodedHeader);
  if (!proofKey.ok) return proofKey;
  const { alg, key, jkt } = proofKey;
  if (!signatureVerifies(alg, key, `${encodedHeader}.${encodedPayload}`, Buffer.from(encodedSignature, 'base64url'))) return refuse('the DPoP proof\'s signature does not verify');
  // A client signs every proof with one key, so its header repeats: kept once its signature verified.
  rememberProofKey(encodedHeader, proofKey);

  const claims = jsonObjectOf(encodedPayload);
  if (claims === undefined) return refuse('the DPoP proof\'s claims are not a JSON object');
  const { jti, htm, htu, iat, ath, nonce } = claims;
  if (typeof jti !== 'string' || jti === '' || jti.length > maxJtiLength) return refuse(`the DPoP proof's jti must be a string of 1 to ${maxJtiLength} characters`);
  if (htm !== check.method) return refuse('the DPoP proof\'s htm is not this request\'s method');
  if (typeof htu !== 'string' || !sameTarget(htu, check.url)) return refuse('the DPoP proof\'s htu is not this request\'s URL');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return refuse('the DPoP proof has no iat');
  if (iat > check.now + check.clockSkewSeconds || iat < check.now - dpopProofLifetimeSeconds - check.clockSkewSeconds) return refuse('the DPoP proof\'s iat is outside the accepted window');
  if (check.accessToken !== undefined && ath !== accessTokenHash(check.accessToken)) return refuse('the DPoP proof\'s ath does not match the access token');
  if (check.acceptsNonce !== undefined && !check.acceptsNonce(typeof nonce === 'string' ? nonce : undefined)) {
    return { ok: false, code: 'ERR_DPOP_NONCE_REQUIRED', description: 'a DPoP proof with the nonce from the DPoP-Nonce header is required' };
  }
  // Last, so that a proof refused for another reason spends nothing.
  if (!check.spentIds.spend(jkt, jti, Math.floor(iat), check.now)) return refuse('the DPoP proof was used before (its jti is single use)');
  return { ok: true, jkt };
}

interface ProofKey {
  readonly ok: true;
  readonly alg: DpopSigningAlgorithm;
  readonly key: KeyObject;
  /** RFC 7638 thumbprint of the key. */
  readonly jkt: string;
}

/**
 * Parsed proof headers whose signature verified, by their encoded form: importing a JWK and
 * hashing its thumbprint cost more than the signature check itself, and a client's header is the
 * same on every proof. Bounded; the oldest is dropped first.
 */
const verifiedHeaders = new Map<string, ProofKey>();
const maxVerifiedHeaders = 10_000;

function rememberProofKey(encodedHeader: string, proofKey: ProofKey): void {
  if (verifiedHeaders.has(encodedHeader)) return;
  if (verifiedHeaders.size >= maxVerifiedHeaders) verifiedHeaders.delete(verifiedHeaders.keys().next().value as string); // size > 0
  verifiedHeaders.set(encodedHeader, proofKey);
}

/** The header's algorithm, key and thumbprint, or why the header is no DPoP proof's. */
function proofKeyOf(encodedHeader: string): ProofKey | Extract<DpopProofResult, { ok: false }> {
  const known = verifiedHeaders.get(encodedHeader);
  if (known !== undefined) return known;
  const header = jsonObjectOf(encodedHeader);
  if (header === undefined || header.typ !== 'dpop+jwt') return refusal('the DPoP proof\'s typ must be dpop+jwt');
  if (typeof header.alg !== 'string' || !allowed.has(header.alg)) return refusal(`the DPoP proof's alg must be one of ${dpopSigningAlgorithms.join(', ')}`);
  const alg = header.alg as DpopSigningAlgorithm; // a member of the set just checked
  const jwk = header.jwk;
  if (!isJsonObject(jwk) || privateMembers.some((member) => member in jwk)) return refusal('the DPoP proof\'s jwk must be a public key');
  const key = publicKeyOf(jwk, alg);
  if (key === undefined) return refusal('the DPoP proof\'s jwk does not fit its alg');
  return { ok: true, alg, key, jkt: jwkThumbprint(jwk) };
}

/** RFC 9449 section 4.2: `ath`, the base64url SHA-256 of the access token's ASCII. */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest('base64url');
}

/** The members RFC 7638 section 3.2 hashes for each key type, in lexicographic order. */
const thumbprintMembers = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'], OKP: ['crv', 'kty', 'x'] } as const;

/** RFC 7638: the SHA-256 of the key's required members as JSON, in order, without whitespace. */
export function jwkThumbprint(jwk: Record<string, unknown>): string {
  const members = thumbprintMembers[jwk.kty as keyof typeof thumbprintMembers]; // kty was checked by publicKeyOf
  const canonical = `{${members.map((member) => `${JSON.stringify(member)}:${JSON.stringify(jwk[member])}`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

/**
 * Whether `htu` names the request's URL (RFC 9449 section 4.3, point 9): scheme, host, port and
 * path after URL normalisation (RFC 3986 section 6: case of scheme and host, default ports), the
 * query and fragment ignored.
 */
function sameTarget(htu: string, url: string): boolean {
  const claimed = targetOf(htu);
  return claimed !== undefined && claimed === targetOf(url);
}

function targetOf(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

function publicKeyOf(jwk: Record<string, unknown>, alg: DpopSigningAlgorithm): KeyObject | undefined {
  const fits = alg === 'ES256' ? jwk.kty === 'EC' && jwk.crv === 'P-256' : alg === 'EdDSA' ? jwk.kty === 'OKP' && jwk.crv === 'Ed25519' : jwk.kty === 'RSA';
  if (!fits) return undefined;
  try {
    // createPublicKey checks the members (curve points, modulus); a JWK is a plain JSON object here.
    const key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    if (jwk.kty === 'RSA' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return undefined;
    return key;
  } catch {
    return undefined;
  }
}

function signatureVerifies(alg: DpopSigningAlgorithm, key: KeyObject, signingInput: string, signature: Buffer): boolean {
  const input = Buffer.from(signingInput);
  try {
    switch (alg) {
      case 'ES256':
        return signature.length === 64 && verify('sha256', input, { key, dsaEncoding: 'ieee-p1363' }, signature);
      case 'RS256':
        return verify('sha256', input, key, signature);
      case 'PS256':
        return verify('sha256', input, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, signature);
      case 'EdDSA':
        return verify(null, input, key, signature);
    }
  } catch {
    return false;
  }
}



const refusal = (description: string) => ({ ok: false, code: 'ERR_DPOP_PROOF_INVALID', description }) as const;
const refuse = (description: string): DpopProofResult => refusal(description);

/**
 * The `jti`s of the proofs this process took, each kept while its `iat` is inside the window (RFC
 * 9449 section 11.1). Memory is bounded without ever taking a replay: when full, the oldest entry
 * is dropped and the window's lower edge rises to its `iat`, so any proof as old as a forgotten one
 * is refused by its age instead. Under a load that fills it faster than proofs age, the window
 * shrinks; it never forgets a proof it would still take.
 */
export class SpentProofIds {
  /** `jkt jti` → the proof's iat. Map order is insertion order, close to iat order. */
  private readonly iats = new Map<string, number>();
  /** Proofs with an iat at or below this are refused: their ids may have been forgotten. */
  private floor = Number.NEGATIVE_INFINITY;

  private readonly windowSeconds: number;
  private readonly capacity: number;

  /** `clockSkewSeconds` as the proofs are checked with (TESSERA_CLOCK_SKEW): an id is kept while its proof could still be taken. */
  constructor(options: { readonly clockSkewSeconds: number; readonly capacity?: number }) {
    this.windowSeconds = dpopProofLifetimeSeconds + options.clockSkewSeconds;
    this.capacity = options.capacity ?? 200_000;
  }

  /** True the first time a key's jti is spent; false for a replay, or a proof no newer than a forgotten one. */
  spend(jkt: string, jti: string, iat: number, now: number): boolean {
    this.forgetAged(now);
    if (iat <= this.floor) return false;
    const key = `${jkt} ${jti}`;
    if (this.iats.has(key)) return false;
    if (this.iats.size >= this.capacity) {
      const [oldestKey, oldestIat] = this.iats.entries().next().value as [string, number]; // size >= capacity > 0
      this.iats.delete(oldestKey);
      this.floor = Math.max(this.floor, oldestIat);
      if (iat <= this.floor) return false;
    }
    this.iats.set(key, iat);
    return true;
  }

  get size(): number {
    return this.iats.size;
  }

  /** Entries whose iat left the window are refused by their age anyway; dropped from the front, where the oldest are. */
  private forgetAged(now: number): void {
    const edge = now - this.windowSeconds;
    for (const [key, iat] of this.iats) {
      if (iat >= edge) break;
      this.iats.delete(key);
    }
  }
}
