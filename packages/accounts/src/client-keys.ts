import { ClientPublicJwk, type ClientKeysSet } from '@tessera/events';
import { InvalidAccountInput } from './invalid-account-input.js';

/** At most this many keys per account: an assertion's kid is looked up among them on every request. */
export const maxClientKeys = 10;
/** At most this many bytes of JWKS JSON per account, as one account event should stay small. */
export const maxClientKeysBytes = 16 * 1024;

/**
 * The members of a JWK that belong to a private or a symmetric key (RFC 7518 sections 6.2.2, 6.3.2,
 * 6.4; RFC 8037 section 2). The log is no place for a secret, and a client whose private key is
 * on the log is no longer the only one able to sign its assertions.
 */
const privateMembers = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** The curves the allowed assertion algorithms take: ES256 (P-256) and EdDSA (Ed25519). */
const curveOf = { EC: 'P-256', OKP: 'Ed25519' } as const;

/**
 * A JWKS (`{"keys": [...]}`) made fit for `ClientKeysSet`: public keys only, each with a distinct
 * `kid` (an assertion names its key by kid), `use` `sig` if given, of a type the allowed algorithms
 * take. Anything else is refused whole, naming the first key at fault.
 */
export function validClientKeys(jwks: unknown): ClientKeysSet['jwks'] {
  const keys = typeof jwks === 'object' && jwks !== null && 'keys' in jwks ? jwks.keys : undefined;
  if (!Array.isArray(keys)) throw refusal('a JWKS is a JSON object with a "keys" array');
  if (keys.length > maxClientKeys) throw refusal(`at most ${maxClientKeys} keys per account; got ${keys.length}`);
  if (Buffer.byteLength(JSON.stringify(jwks)) > maxClientKeysBytes) throw refusal(`at most ${maxClientKeysBytes} bytes of JWKS per account`);
  const kids = new Set<string>();
  const valid = keys.map((key: unknown, index) => {
    const name = `key ${index + 1}`;
    if (typeof key !== 'object' || key === null) throw refusal(`${name} is not a JSON object`);
    const held = privateMembers.filter((member) => member in key);
    if (held.length > 0) throw refusal(`${name} holds private key members (${held.join(', ')}): register the public key only`);
    const parsed = ClientPublicJwk.safeParse(key);
    if (!parsed.success) throw refusal(`${name} is not a public EC, RSA or OKP key with a kid (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    const jwk = parsed.data;
    if (kids.has(jwk.kid)) throw refusal(`${name} repeats the kid "${jwk.kid}"`);
    kids.add(jwk.kid);
    if (jwk.use !== undefined && jwk.use !== 'sig') throw refusal(`${name} has use "${String(jwk.use)}"; an assertion key is for "sig"`);
    if (jwk.kty === 'RSA' ? typeof jwk.n !== 'string' || typeof jwk.e !== 'string' : jwk.crv !== curveOf[jwk.kty] || typeof jwk.x !== 'string') {
      throw refusal(`${name} is not an RSA key, a P-256 EC key or an Ed25519 OKP key`);
    }
    return jwk;
  });
  return { keys: valid };
}

const refusal = (message: string) => new InvalidAccountInput('client-keys', message);

/** At most this many characters of JWKS URL: one account event should stay small, and no server needs more. */
export const maxJwksUrlLength = 2048;

/**
 * A JWKS URL made fit for `ClientKeysSet`: https (plain http only to a host `plainHttpAllowed`
 * names, which is TESSERA_EGRESS_ALLOW's: a local server for a test or a developer), no
 * credentials in it (they would be on the log and in every replica's memory), no fragment (a
 * fetch never sends one, so it could only mislead), at most 2048 characters. Where it leads is
 * checked when the keys are fetched, after DNS resolution, by the egress policy.
 */
export function validJwksUrl(url: string, plainHttpAllowed: (url: URL) => boolean = () => false): string {
  if (url.length > maxJwksUrlLength) throw jwksUrlRefusal(`at most ${maxJwksUrlLength} characters`);
  if (!URL.canParse(url)) throw jwksUrlRefusal('not a URL');
  const parsed = new URL(url);
  if (parsed.username !== '' || parsed.password !== '') throw jwksUrlRefusal('it holds credentials (user:password@); a JWKS is public');
  if (parsed.hash !== '' || url.includes('#')) throw jwksUrlRefusal('it has a fragment (#…)');
  if (parsed.protocol === 'http:' && !plainHttpAllowed(parsed)) throw jwksUrlRefusal('must be https (http only to a host TESSERA_EGRESS_ALLOW names)');
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw jwksUrlRefusal('must be https');
  // Normalized (host lowercased, path escaped) as fetched, which may lengthen it.
  if (parsed.href.length > maxJwksUrlLength) throw jwksUrlRefusal(`at most ${maxJwksUrlLength} characters`);
  return parsed.href;
}

// The message never repeats the URL: the caller has it, and its query may hold a token.
const jwksUrlRefusal = (why: string) => new InvalidAccountInput('client-keys', `the JWKS URL is refused: ${why}`);
