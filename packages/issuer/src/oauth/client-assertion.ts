import { decodeJwt, decodeProtectedHeader, errors, importJWK, jwtVerify, type JWK } from 'jose';
import type { ClientPublicJwk } from '@tessera/contracts';
import { UnknownClientKey } from '../client-key-source.js';
import { IssuerRefusal } from '../issuer-errors.js';
import type { UsedAssertionIds } from './used-assertion-ids.js';

/** RFC 7523 section 2.2: the `client_assertion_type` of a JWT client assertion. */
export const jwtBearerAssertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * The algorithms an assertion may be signed with: asymmetric only. `none` would let anyone be the
 * client, and HS* would need a shared secret, which is what private_key_jwt exists to avoid.
 */
export const assertionSigningAlgorithms = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const;
const allowed: ReadonlySet<string> = new Set(assertionSigningAlgorithms);

/**
 * How far ahead an assertion's `exp` may lie (beyond the clock skew): the jti of an assertion is
 * remembered until its `exp`, so a bounded lifetime bounds what is remembered.
 */
export const maxAssertionLifetimeSeconds = 300;

export interface AssertionCheck {
  /** The metadata's `issuer` and `token_endpoint`: an assertion's `aud` must hold one of them (RFC 7523 section 3, point 3). */
  readonly audiences: readonly string[];
  /** Epoch seconds. */
  readonly now: number;
  /** TESSERA_CLOCK_SKEW, in seconds. */
  readonly clockSkewSeconds: number;
  readonly usedIds: UsedAssertionIds;
}

/** The client an assertion claims to be (`sub`, which must equal `iss`), before anything is checked; undefined if it names none. */
export function assertedClientId(assertion: string): string | undefined {
  try {
    const claims = decodeJwt(assertion);
    return typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

/**
 * RFC 7523 section 3 for a client assertion of `clientId`, checked against the keys the account
 * registered: an allowed algorithm, the key its `kid` names (or the only key, when it names none),
 * the signature, `iss` = `sub` = the client, `aud`, `exp` present, not passed and not too far ahead,
 * and a `jti` never seen before within its lifetime. Any failure is an invalid_client whose message
 * says which check failed (the client sees it as `error_description`; it reveals no key).
 */
export async function checkClientAssertion(assertion: string, clientId: string, keys: readonly ClientPublicJwk[], check: AssertionCheck): Promise<void> {
  const { alg, kid } = protectedHeaderOf(assertion);
  if (alg === undefined || !allowed.has(alg)) throw invalid(`the assertion's alg must be one of ${assertionSigningAlgorithms.join(', ')}`);
  const jwk = kid === undefined ? (keys.length === 1 ? keys[0] : undefined) : keys.find((key) => key.kid === kid);
  if (jwk === undefined) throw kid === undefined ? invalid('the assertion names no kid, and the client has more than one key') : new UnknownClientKey();
  const claims = await verifiedClaims(assertion, jwk, alg, clientId, check);
  if (claims.exp > check.now + maxAssertionLifetimeSeconds + check.clockSkewSeconds) throw invalid(`the assertion's exp lies more than ${maxAssertionLifetimeSeconds} seconds ahead`);
  if (!check.usedIds.spend(clientId, claims.jti, claims.exp + check.clockSkewSeconds, check.now)) throw invalid('the assertion was used before (its jti is single use)');
}

function protectedHeaderOf(assertion: string): { alg?: string | undefined; kid?: string | undefined } {
  try {
    return decodeProtectedHeader(assertion);
  } catch {
    throw invalid('client_assertion is not a JWT');
  }
}

async function verifiedClaims(assertion: string, jwk: ClientPublicJwk, alg: string, clientId: string, check: AssertionCheck): Promise<{ exp: number; jti: string }> {
  let key: Awaited<ReturnType<typeof importJWK>>;
  try {
    // A ClientPublicJwk is a JWK with public members only (checked when it was registered).
    key = await importJWK(jwk as JWK, alg);
  } catch {
    throw invalid('the client\'s key does not fit the assertion\'s alg');
  }
  try {
    const { payload } = await jwtVerify(assertion, key, {
      algorithms: [alg],
      issuer: clientId,
      subject: clientId,
      audience: [...check.audiences],
      currentDate: new Date(check.now * 1000),
      clockTolerance: check.clockSkewSeconds,
      requiredClaims: ['exp', 'jti'],
    });
    if (typeof payload.jti !== 'string' || payload.jti === '' || payload.jti.length > 256) throw invalid('the assertion\'s jti must be a string of 1 to 256 characters');
    // requiredClaims made jose check that exp is there and a number.
    return { exp: payload.exp!, jti: payload.jti };
  } catch (error) {
    if (error instanceof IssuerRefusal) throw error;
    throw invalid(refusalOf(error));
  }
}

function refusalOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the assertion has expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `the assertion's ${error.claim} claim is missing or wrong`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the assertion\'s signature does not verify with the client\'s key';
  return 'the assertion does not verify';
}

const invalid = (message: string) => new IssuerRefusal('ERR_INVALID_CLIENT', message);
