// Writes test/vectors/verification/vectors.json: the cases every verification SDK (Node, Python,
// Go) runs, so that they refuse and accept the same tokens for the same reasons.
//
//   node test/vectors/generate.mjs
//
// Deterministic: the keys are the committed test-only JWKs, every time and id is fixed, and ES256
// signatures use RFC 6979 nonces (node:crypto draws random ones), so running it again writes the
// same bytes and a diff shows only what a change to this file meant.
import { createHash, createHmac, createPublicKey, verify } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const folder = join(dirname(fileURLToPath(import.meta.url)), 'verification');
const readJwk = (name) => JSON.parse(readFileSync(join(folder, `${name}.jwk.json`), 'utf8'));

// --- ES256 with RFC 6979 nonces (P-256, SHA-256) -------------------------------------------------

const p = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const a = p - 3n;
const generator = {
  x: 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n,
  y: 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n,
  z: 1n,
};
const mod = (value, m) => ((value % m) + m) % m;
function power(base, exponent, m) {
  let result = 1n;
  let b = mod(base, m);
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
  }
  return result;
}
const inverse = (value, m) => power(value, m - 2n, m); // m is prime

// Jacobian coordinates: no inversion per step.
const infinity = { x: 0n, y: 1n, z: 0n };
function double(point) {
  if (point.z === 0n || point.y === 0n) return infinity;
  const yy = (point.y * point.y) % p;
  const s = (4n * point.x * yy) % p;
  const zz = (point.z * point.z) % p;
  const m = mod(3n * point.x * point.x + a * zz * zz, p);
  const x = mod(m * m - 2n * s, p);
  return { x, y: mod(m * (s - x) - 8n * yy * yy, p), z: (2n * point.y * point.z) % p };
}
function add(one, other) {
  if (one.z === 0n) return other;
  if (other.z === 0n) return one;
  const z1z1 = (one.z * one.z) % p;
  const z2z2 = (other.z * other.z) % p;
  const u1 = (one.x * z2z2) % p;
  const u2 = (other.x * z1z1) % p;
  const s1 = (one.y * z2z2 * other.z) % p;
  const s2 = (other.y * z1z1 * one.z) % p;
  if (u1 === u2) return s1 === s2 ? double(one) : infinity;
  const h = mod(u2 - u1, p);
  const r = mod(s2 - s1, p);
  const hh = (h * h) % p;
  const hhh = (hh * h) % p;
  const x = mod(r * r - hhh - 2n * u1 * hh, p);
  return { x, y: mod(r * (u1 * hh - x) - s1 * hhh, p), z: (h * one.z * other.z) % p };
}
function multiply(scalar, point) {
  let result = infinity;
  for (let bit = 255n; bit >= 0n; bit -= 1n) {
    result = double(result);
    if ((scalar >> bit) & 1n) result = add(result, point);
  }
  return result;
}
const affineX = (point) => (point.x * inverse((point.z * point.z) % p, p)) % p;

const toBigInt = (bytes) => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
const toBytes = (value) => Buffer.from(value.toString(16).padStart(64, '0'), 'hex');
const hmac = (key, ...parts) => createHmac('sha256', key).update(Buffer.concat(parts)).digest();

/** RFC 6979 section 3.2: the nonce for this key and message hash. */
function* nonces(secret, digest) {
  const x = toBytes(secret);
  const h = toBytes(mod(toBigInt(digest), n));
  let v = Buffer.alloc(32, 1);
  let k = Buffer.alloc(32, 0);
  k = hmac(k, v, Buffer.from([0]), x, h);
  v = hmac(k, v);
  k = hmac(k, v, Buffer.from([1]), x, h);
  v = hmac(k, v);
  for (;;) {
    v = hmac(k, v);
    const candidate = toBigInt(v);
    if (candidate > 0n && candidate < n) yield candidate;
    k = hmac(k, v, Buffer.from([0]));
    v = hmac(k, v);
  }
}

function es256(privateJwk, signingInput) {
  const secret = toBigInt(Buffer.from(privateJwk.d, 'base64url'));
  const digest = createHash('sha256').update(signingInput).digest();
  const z = toBigInt(digest);
  for (const k of nonces(secret, digest)) {
    const r = affineX(multiply(k, generator)) % n;
    const s = (inverse(k, n) * (z + r * secret)) % n;
    if (r === 0n || s === 0n) continue;
    const signature = Buffer.concat([toBytes(r), toBytes(s)]);
    // The arithmetic above is this file's own: node:crypto checks every signature it makes.
    const key = createPublicKey({ key: publicJwk(privateJwk), format: 'jwk' });
    if (!verify('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' }, signature)) throw new Error('ES256 signature does not verify');
    return signature.toString('base64url');
  }
  throw new Error('unreachable');
}

// --- JOSE ----------------------------------------------------------------------------------------

const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
const publicJwk = ({ kty, crv, x, y }) => ({ kty, crv, x, y });
/** RFC 7638, as Tessera makes its kids and as `cnf.jkt` is made. */
const thumbprint = ({ crv, kty, x, y }) => createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
function jws(header, payload, privateJwk) {
  const signingInput = `${encode(header)}.${encode(payload)}`;
  return `${signingInput}.${es256(privateJwk, signingInput)}`;
}

// --- the fixtures --------------------------------------------------------------------------------

const signingKey = readJwk('test-only-signing-key');
const holderKey = readJwk('test-only-dpop-key');
const otherHolderKey = readJwk('test-only-other-dpop-key');
const kid = thumbprint(signingKey);
const holderJkt = thumbprint(holderKey);

const issuer = 'https://tessera.test.example';
const now = 1_800_000_000;
const clockSkewSeconds = 60;
const accessTokenLifetimeSeconds = 900;
const maxAccessTokenLifetimeSeconds = 3600;
const account = 'acc_test_0001';
const clientId = 'tsl_test_0001';
const family = 'fam_test_0001';
const resourceUrl = 'https://api.test.example/orders';
const resourceAudience = 'https://api.test.example';

/** As packages/tokens/src/access-token.ts signs them: header members in this order, claims as given. */
function accessToken(overrides = {}, header = {}) {
  const claims = {
    iss: issuer,
    sub: account,
    aud: 'tessera:v5',
    client_id: clientId,
    iat: now - 60,
    exp: now - 60 + accessTokenLifetimeSeconds,
    jti: 'at_test_0001',
    scope: 'orders:read orders:write',
    fid: family,
    gen: 0,
    ...overrides,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return jws({ alg: 'ES256', typ: 'at+jwt', kid, ...header }, claims, signingKey);
}

/** RFC 9449 section 4.2, as a client makes one. */
function dpopProof(token, { method = 'GET', url = resourceUrl, iat = now, jti = 'proof_test_0001', by = holderKey } = {}) {
  const ath = createHash('sha256').update(token, 'ascii').digest('base64url');
  return jws({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk(by) }, { jti, htm: method, htu: url, iat, ath }, by);
}

/** A valid token with its signature's first byte changed: still 64 canonical bytes. */
function withBadSignature(token) {
  const [header, payload, signature] = token.split('.');
  const bytes = Buffer.from(signature, 'base64url');
  bytes[0] ^= 0x01;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

// The decoded payloads of the SETs a transmitter sends (docs/shared-signals.md, with the tessera_ members).
const sessionRevoked = 'https://schemas.openid.net/secevent/caep/event-type/session-revoked';
const credentialChange = 'https://schemas.openid.net/secevent/caep/event-type/credential-change';
const tokenRotated = 'urn:tessera:secevent:token-rotated';
const receiverAudience = 'urn:tessera:ssf:receiver:test';
const user = { format: 'iss_sub', iss: issuer, sub: account };
function securityEvent(jti, subject, type, event) {
  return { iss: issuer, aud: receiverAudience, jti, iat: now - 30, txn: `txn_${jti}`, sub_id: subject, events: { [type]: event } };
}
const familyRevoked = (members = { tessera_rejects_until: now + accessTokenLifetimeSeconds }, familyId = family) =>
  securityEvent(`set_revoked_${familyId}`, { format: 'complex', user, session: { format: 'opaque', id: familyId } }, sessionRevoked, {
    event_timestamp: now - 30,
    initiating_entity: 'user',
    reason_admin: { en: 'revoked by its client (revoke-oauth-token)' },
    ...members,
  });
const familyRotated = (generation) =>
  securityEvent(`set_rotated_${generation}`, { format: 'complex', user, session: { format: 'opaque', id: family } }, tokenRotated, {
    event_timestamp: now - 30,
    generation,
    tessera_rejects_until: now + accessTokenLifetimeSeconds,
  });
const accountCut = (members = { tessera_not_before: now - 30, tessera_rejects_until: now + accessTokenLifetimeSeconds }) =>
  securityEvent('set_account_cut', { format: 'complex', user }, sessionRevoked, {
    event_timestamp: now - 30,
    initiating_entity: 'admin',
    reason_admin: { en: 'every token of the account revoked by an operator' },
    ...members,
  });
const credentialCut = (members = { tessera_client_id: clientId, tessera_not_before: now - 30, tessera_rejects_until: now + accessTokenLifetimeSeconds }) =>
  securityEvent('set_credential_cut', { format: 'complex', user }, credentialChange, {
    event_timestamp: now - 30,
    credential_type: 'api-key',
    change_type: 'revoke',
    friendly_name: clientId,
    initiating_entity: 'admin',
    ...members,
  });

const read = { interface: 'v5', permission: 'orders:read' };
const ok = { status: 200, error: null, scheme: null };
const bearerInvalid = { status: 401, error: 'invalid_token', scheme: 'Bearer' };
const dpopInvalidToken = { status: 401, error: 'invalid_token', scheme: 'DPoP' };
const dpopInvalidProof = { status: 401, error: 'invalid_dpop_proof', scheme: 'DPoP' };

const valid = accessToken();
const bound = accessToken({ cnf: { jkt: holderJkt }, jti: 'at_test_bound' });
const laterToken = accessToken({ iat: now - 10, jti: 'at_test_later' });

const cases = [
  { name: 'valid bearer token', authorization: `Bearer ${valid}`, requirement: read, expected: ok },
  { name: 'valid bearer token, no permission required', authorization: `Bearer ${valid}`, requirement: { interface: 'v5' }, expected: ok },
  { name: 'scheme is case-insensitive', authorization: `bearer ${valid}`, requirement: read, expected: ok },
  { name: 'no Authorization header', authorization: null, requirement: read, expected: { status: 401, error: null, scheme: 'Bearer' } },
  { name: 'another scheme', authorization: `Basic ${Buffer.from('a:b').toString('base64')}`, requirement: read, expected: { status: 401, error: null, scheme: 'Bearer' } },
  { name: 'not a JWT', authorization: 'Bearer not-a-jwt', requirement: read, expected: bearerInvalid },
  { name: 'bad signature', authorization: `Bearer ${withBadSignature(valid)}`, requirement: read, expected: bearerInvalid },
  { name: 'unknown kid', authorization: `Bearer ${accessToken({}, { kid: 'test-unknown-kid' })}`, requirement: read, expected: bearerInvalid },
  { name: 'typ is not at+jwt', authorization: `Bearer ${accessToken({}, { typ: 'JWT' })}`, requirement: read, expected: bearerInvalid },
  { name: 'typ application/at+jwt is taken', authorization: `Bearer ${accessToken({}, { typ: 'application/at+jwt' })}`, requirement: read, expected: ok },
  { name: 'wrong iss', authorization: `Bearer ${accessToken({ iss: 'https://other.test.example' })}`, requirement: read, expected: bearerInvalid },
  { name: 'wrong aud: a v1 token where v5 is required', authorization: `Bearer ${accessToken({ aud: 'tessera:v1' })}`, requirement: read, expected: bearerInvalid },
  {
    name: 'resource audience required and carried',
    authorization: `Bearer ${accessToken({ aud: resourceAudience })}`,
    requirement: { ...read, audience: resourceAudience },
    expected: ok,
  },
  { name: 'wrong aud: a resource token where the default audience is required', authorization: `Bearer ${accessToken({ aud: resourceAudience })}`, requirement: read, expected: bearerInvalid },
  { name: 'expired: now equals exp', authorization: `Bearer ${valid}`, now: now - 60 + accessTokenLifetimeSeconds, requirement: read, expected: bearerInvalid },
  { name: 'one second before exp', authorization: `Bearer ${valid}`, now: now - 60 + accessTokenLifetimeSeconds - 1, requirement: read, expected: ok },
  {
    name: 'not yet valid: iat beyond the clock skew',
    authorization: `Bearer ${accessToken({ iat: now + clockSkewSeconds + 1, exp: now + 2000 })}`,
    requirement: read,
    expected: bearerInvalid,
  },
  { name: 'iat in the future within the clock skew', authorization: `Bearer ${accessToken({ iat: now + clockSkewSeconds, exp: now + 2000 })}`, requirement: read, expected: ok },
  { name: 'not yet valid: nbf beyond the clock skew', authorization: `Bearer ${accessToken({ nbf: now + clockSkewSeconds + 1 })}`, requirement: read, expected: bearerInvalid },
  {
    name: 'missing scope',
    authorization: `Bearer ${valid}`,
    requirement: { interface: 'v5', permission: 'orders:delete' },
    expected: { status: 403, error: 'insufficient_scope', scheme: 'Bearer' },
  },
  {
    name: 'a scope that only starts like the permission is not it',
    authorization: `Bearer ${accessToken({ scope: 'orders:reader' })}`,
    requirement: read,
    expected: { status: 403, error: 'insufficient_scope', scheme: 'Bearer' },
  },
  { name: 'revoked family', authorization: `Bearer ${valid}`, requirement: read, revocations: [familyRevoked()], expected: bearerInvalid },
  {
    name: 'revoked family, without tessera_rejects_until (an older transmitter)',
    authorization: `Bearer ${valid}`,
    requirement: read,
    revocations: [familyRevoked({})],
    expected: bearerInvalid,
  },
  { name: 'another family revoked', authorization: `Bearer ${valid}`, requirement: read, revocations: [familyRevoked(undefined, 'fam_test_other')], expected: ok },
  { name: 'rotated generation: generation 0 after a rotation to 1', authorization: `Bearer ${valid}`, requirement: read, revocations: [familyRotated(1)], expected: bearerInvalid },
  { name: 'rotated generation: generation 1 after a rotation to 1', authorization: `Bearer ${accessToken({ gen: 1 })}`, requirement: read, revocations: [familyRotated(1)], expected: ok },
  {
    name: 'rotations applied out of order keep the highest generation',
    authorization: `Bearer ${accessToken({ gen: 1 })}`,
    requirement: read,
    revocations: [familyRotated(2), familyRotated(1)],
    expected: bearerInvalid,
  },
  { name: 'account cut: token issued before notBefore', authorization: `Bearer ${valid}`, requirement: read, revocations: [accountCut()], expected: bearerInvalid },
  { name: 'account cut: token issued at or after notBefore', authorization: `Bearer ${laterToken}`, requirement: read, revocations: [accountCut()], expected: ok },
  {
    name: 'account cut without tessera_ members: notBefore is event_timestamp',
    authorization: `Bearer ${valid}`,
    requirement: read,
    revocations: [accountCut({})],
    expected: bearerInvalid,
  },
  { name: 'account cut of another account', authorization: `Bearer ${accessToken({ sub: 'acc_test_other' })}`, requirement: read, revocations: [accountCut()], expected: ok },
  { name: 'credential cut: token issued before notBefore', authorization: `Bearer ${valid}`, requirement: read, revocations: [credentialCut()], expected: bearerInvalid },
  { name: 'credential cut: token issued after notBefore', authorization: `Bearer ${laterToken}`, requirement: read, revocations: [credentialCut()], expected: ok },
  {
    name: 'credential cut of another client',
    authorization: `Bearer ${accessToken({ client_id: 'tsl_test_other' })}`,
    requirement: read,
    revocations: [credentialCut()],
    expected: ok,
  },
  {
    name: 'credential revoked without a token cut (no tessera_client_id)',
    authorization: `Bearer ${valid}`,
    requirement: read,
    revocations: [credentialCut({})],
    expected: ok,
  },
  {
    name: 'DPoP-bound token with a good proof',
    authorization: `DPoP ${bound}`,
    request: { method: 'GET', url: resourceUrl, dpop: dpopProof(bound) },
    requirement: read,
    expected: ok,
  },
  {
    name: 'DPoP proof URL normalised, query ignored',
    authorization: `DPoP ${bound}`,
    request: { method: 'GET', url: 'HTTPS://API.test.example:443/orders?page=2', dpop: dpopProof(bound) },
    requirement: read,
    expected: ok,
  },
  { name: 'DPoP-bound token with no proof', authorization: `DPoP ${bound}`, request: { method: 'GET', url: resourceUrl }, requirement: read, expected: dpopInvalidProof },
  {
    name: 'DPoP-bound token with a proof for another URL',
    authorization: `DPoP ${bound}`,
    request: { method: 'GET', url: resourceUrl, dpop: dpopProof(bound, { url: 'https://api.test.example/invoices' }) },
    requirement: read,
    expected: dpopInvalidProof,
  },
  {
    name: 'DPoP-bound token with a proof for another method',
    authorization: `DPoP ${bound}`,
    request: { method: 'GET', url: resourceUrl, dpop: dpopProof(bound, { method: 'POST' }) },
    requirement: read,
    expected: dpopInvalidProof,
  },
  {
    name: 'DPoP proof too old',
    authorization: `DPoP ${bound}`,
    request: { method: 'GET', url: resourceUrl, dpop: dpopProof(bound, { iat: now - 60 - clockSkewSeconds - 1 }) },
    requirement: read,
    expected: dpopInvalidProof,
  },
  {
    name: 'DPoP proof for another access token (ath)',
    authorization: `DPoP ${bound}`,
    request: { method: 'GET', url: resourceUrl, dpop: dpopProof(valid) },
    requirement: read,
    expected: dpopInvalidProof,
  },
  {
    name: 'DPoP proof signed by another key than cnf.jkt',
    authorization: `DPoP ${bound}`,
    request: { method: 'GET', url: resourceUrl, dpop: dpopProof(bound, { by: otherHolderKey }) },
    requirement: read,
    expected: dpopInvalidProof,
  },
  { name: 'DPoP-bound token sent as Bearer', authorization: `Bearer ${bound}`, requirement: read, expected: bearerInvalid },
  {
    name: 'unbound token sent with the DPoP scheme',
    authorization: `DPoP ${valid}`,
    request: { method: 'GET', url: resourceUrl, dpop: dpopProof(valid) },
    requirement: read,
    expected: dpopInvalidToken,
  },
  {
    name: 'DPoP-bound token of a revoked family',
    authorization: `DPoP ${bound}`,
    request: { method: 'GET', url: resourceUrl, dpop: dpopProof(bound) },
    requirement: read,
    revocations: [familyRevoked()],
    expected: dpopInvalidToken,
  },
  {
    name: 'DPoP-bound token missing scope',
    authorization: `DPoP ${bound}`,
    request: { method: 'GET', url: resourceUrl, dpop: dpopProof(bound) },
    requirement: { interface: 'v5', permission: 'orders:delete' },
    expected: { status: 403, error: 'insufficient_scope', scheme: 'DPoP' },
  },
];

const vectors = {
  description:
    'Verification vectors shared by the Node, Python and Go verification SDKs. Generated by test/vectors/generate.mjs from the test-only keys beside this file; do not edit by hand.',
  issuer,
  audiences: { v5: 'tessera:v5', v1: 'tessera:v1' },
  clock_skew_seconds: clockSkewSeconds,
  max_access_token_lifetime_seconds: maxAccessTokenLifetimeSeconds,
  jwks: { keys: [{ ...publicJwk(signingKey), kid, alg: 'ES256', use: 'sig' }] },
  cases: cases.map(({ name, authorization, request, now: at = now, requirement, revocations = [], expected }) => ({
    name,
    authorization,
    ...(request === undefined ? {} : { request }),
    now: at,
    requirement,
    revocations,
    expected,
  })),
};

writeFileSync(join(folder, 'vectors.json'), `${JSON.stringify(vectors, null, 2)}\n`);
console.log(`wrote ${vectors.cases.length} cases to ${join('test', 'vectors', 'verification', 'vectors.json')}`);
