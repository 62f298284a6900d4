import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AccessTokenClaims } from '@tessera/contracts';
import { signAccessToken, verifyAccessToken } from './access-token.js';
import { PublicKeySet } from './key-set.js';
import { familyOfRefreshToken, homeRegionOfFamily, newFamilyId, newRefreshToken } from './refresh-token.js';
import { createSecretHasher } from './secret-hasher.js';
import { generateSigningKey, signingKeyFromJwk, type SigningKey } from './signing-key.js';

const now = 1_800_000_000;
const issuer = 'https://tessera.test';
let key: SigningKey;
let keys: PublicKeySet;
const claims = (overrides: Partial<AccessTokenClaims> = {}): AccessTokenClaims => ({
  iss: issuer,
  sub: 'acc-1',
  aud: 'tessera:v5',
  client_id: 'login-1',
  iat: now,
  exp: now + 3600,
  jti: 'jti-1',
  scope: 'transaction:charge',
  fid: 'family',
  gen: 0,
  ...overrides,
});
const verifyAt = (token: string, nowSeconds = now, audience = 'tessera:v5') => verifyAccessToken(token, { keys, issuer, audience, nowSeconds });
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

beforeAll(async () => {
  const generated = await generateSigningKey();
  key = signingKeyFromJwk(generated.kid, generated.privateJwk);
  keys = new PublicKeySet();
  keys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now - 10 });
});

describe('access tokens', () => {
  it('round-trips the RFC 9068 claims with typ at+jwt and a kid', () => {
    const token = signAccessToken(claims(), key);
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;
    expect(header).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: key.kid });
    expect(verifyAt(token)).toEqual({ ok: true, claims: claims() });
  });

  it('is a standard JWT: jose verifies it against the published JWKS', async () => {
    const token = signAccessToken(claims(), key);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(keys.jwks(now)), {
      issuer,
      audience: 'tessera:v5',
      typ: 'at+jwt',
      algorithms: ['ES256'],
      currentDate: new Date(now * 1000),
    });
    expect(payload.sub).toBe('acc-1');
    expect(protectedHeader.kid).toBe(key.kid);
  });

  it('expires exactly at exp', () => {
    const token = signAccessToken(claims(), key);
    expect(verifyAt(token, now + 3599).ok).toBe(true);
    expect(verifyAt(token, now + 3600)).toEqual({ ok: false, code: 'ERR_TOKEN_EXPIRED' });
  });

  it('refuses another audience, so v1 and v5 tokens stay apart', () => {
    expect(verifyAt(signAccessToken(claims({ aud: 'tessera:v1' }), key))).toEqual({ ok: false, code: 'ERR_TOKEN_AUDIENCE' });
  });

  it('refuses another issuer', () => {
    expect(verifyAt(signAccessToken(claims({ iss: 'https://evil.test' }), key))).toEqual({ ok: false, code: 'ERR_TOKEN_ISSUER' });
  });

  it('refuses alg none and HS256 signed with the public key', () => {
    const payload = b64(claims());
    expect(verifyAt(`${b64({ alg: 'none', typ: 'at+jwt', kid: key.kid })}.${payload}.`).ok).toBe(false);
    const header = b64({ alg: 'HS256', typ: 'at+jwt', kid: key.kid });
    const mac = createHmac('sha256', JSON.stringify(key.publicJwk)).update(`${header}.${payload}`).digest('base64url');
    expect(verifyAt(`${header}.${payload}.${mac}`)).toEqual({ ok: false, code: 'ERR_TOKEN_ALGORITHM' });
  });

  it('refuses a token signed by an unknown key with a known kid', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const input = `${b64({ alg: 'ES256', typ: 'at+jwt', kid: key.kid })}.${b64(claims())}`;
    const forged = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    expect(verifyAt(`${input}.${forged}`)).toEqual({ ok: false, code: 'ERR_TOKEN_SIGNATURE' });
  });

  it('refuses a tampered payload, an unknown kid, a wrong typ and garbage', () => {
    const token = signAccessToken(claims(), key);
    const [h, , s] = token.split('.');
    expect(verifyAt(`${h}.${b64(claims({ scope: 'admin' }))}.${s}`)).toEqual({ ok: false, code: 'ERR_TOKEN_SIGNATURE' });
    const unknownKid = signAccessToken(claims(), { ...key, kid: 'nope' });
    expect(verifyAt(unknownKid)).toEqual({ ok: false, code: 'ERR_TOKEN_UNKNOWN_KEY' });
    for (const garbage of ['', 'a.b', 'a.b.c.d', '!!.??.**', `${h}.${h}`]) expect(verifyAt(garbage).ok).toBe(false);
    const wrongTyp = `${b64({ alg: 'ES256', typ: 'JWT', kid: key.kid })}.${b64(claims())}`;
    const signature = sign('sha256', Buffer.from(wrongTyp), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    expect(verifyAt(`${wrongTyp}.${signature}`)).toEqual({ ok: false, code: 'ERR_TOKEN_TYPE' });
  });

  it('honours nbf when present: refused before it (beyond the clock skew), accepted from it', () => {
    const token = signAccessToken({ ...claims(), nbf: now + 600 }, key);
    expect(verifyAt(token, now + 600 - 61)).toEqual({ ok: false, code: 'ERR_TOKEN_NOT_YET_VALID' });
    expect(verifyAt(token, now + 600 - 60).ok).toBe(true);
    expect(verifyAt(token, now + 600).ok).toBe(true);
  });

  it('refuses an nbf that is not a whole number of seconds', () => {
    const input = `${b64({ alg: 'ES256', typ: 'at+jwt', kid: key.kid })}.${b64({ ...claims(), nbf: 'later' })}`;
    const signature = sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    expect(verifyAt(`${input}.${signature}`)).toEqual({ ok: false, code: 'ERR_TOKEN_MALFORMED' });
  });

  it('refuses a signature whose base64url is not canonical: trailing bits set in the last character, or padding', () => {
    const token = signAccessToken(claims(), key);
    const signature = token.split('.')[2]!;
    // 64 bytes are 86 characters: the last one carries 2 bits of data and 4 that must be zero.
    const last = signature.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) + 1]!;
    const variant = `${token.slice(0, -1)}${sibling}`;
    // The same 64 bytes: only the encoding differs, so the refusal is about the encoding.
    expect(Buffer.from(variant.split('.')[2]!, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    expect(verifyAt(variant).ok).toBe(false);
    expect(verifyAt(`${token}==`).ok).toBe(false);
    expect(verifyAt(token).ok).toBe(true);
  });
});

describe('key set', () => {
  it('keeps a retired key in the JWKS and for verification until retainUntil', async () => {
    const set = new PublicKeySet();
    const next = await generateSigningKey();
    set.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now });
    set.apply({ type: 'SigningKeyPublished', v: 1, kid: next.kid, alg: 'ES256', publicJwk: signingKeyFromJwk(next.kid, next.privateJwk).publicJwk, at: now + 1 });
    set.apply({ type: 'SigningKeyRetired', v: 1, kid: key.kid, at: now + 1, retainUntil: now + 3661 });
    expect(set.currentKid()).toBe(next.kid);
    expect(set.jwks(now + 3660).keys.map((k) => k.kid).sort()).toEqual([key.kid, next.kid].sort());
    expect(set.jwks(now + 3661).keys.map((k) => k.kid)).toEqual([next.kid]);
    expect(set.find(key.kid, now + 3661)).toBeUndefined();
    expect(JSON.stringify(set.jwks(now))).not.toContain('"d"');
  });
});

describe('refresh tokens and secrets', () => {
  it('names its family and nothing else parses as one', () => {
    const familyId = newFamilyId();
    const token = newRefreshToken(familyId);
    expect(familyOfRefreshToken(token)).toBe(familyId);
    expect(newRefreshToken(familyId)).not.toBe(token);
    for (const bad of ['', 'tsr_', `tsr_${familyId}`, `x${token}`, `${token}.x`, token.replace(familyId, 'short')]) {
      expect(familyOfRefreshToken(bad)).toBeUndefined();
    }
  });

  it('parses bare and region-prefixed family ids alike, and names the home region of a prefixed one', () => {
    const bare = newFamilyId();
    const homed = newFamilyId('eu1');
    expect(bare).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(homed).toMatch(/^eu1_[A-Za-z0-9_-]{22}$/);
    expect(familyOfRefreshToken(newRefreshToken(homed))).toBe(homed);
    expect(homeRegionOfFamily(homed)).toBe('eu1');
    expect(homeRegionOfFamily(bare)).toBeUndefined();
    // A bare id whose random part happens to hold `_` is still bare: the length decides.
    expect(homeRegionOfFamily('ab_cdefghijklmnopqrstu')).toBeUndefined();
    expect(homeRegionOfFamily('us1_ab_cdefghijklmnopqrstu')).toBe('us1');
    for (const bad of [`EU1_${bare}`, `eu-1_${bare}`, `_${bare}`, `${'a'.repeat(17)}_${bare}`, `eu1_${bare}x`, `eu1${bare}`]) {
      expect(familyOfRefreshToken(newRefreshToken(bad))).toBeUndefined();
    }
  });

  it('makes family ids from the time: their 16 bytes are a UUID of version 7, which starts with the millisecond it was made', () => {
    const before = Date.now();
    const ids = Array.from({ length: 1000 }, (_, index) => newFamilyId(index % 2 === 0 ? undefined : 'eu1'));
    const after = Date.now();
    const bytes = ids.map((id) => Buffer.from(id.slice(-22), 'base64url'));
    for (const id of bytes) {
      expect(id).toHaveLength(16);
      expect(id[6]! >> 4).toBe(7);
      expect(id[8]! >> 6).toBe(0b10);
      expect(id.readUIntBE(0, 6)).toBeGreaterThanOrEqual(before);
      expect(id.readUIntBE(0, 6)).toBeLessThanOrEqual(after);
    }
    for (let index = 1; index < bytes.length; index += 1) expect(bytes[index]!.readUIntBE(0, 6)).toBeGreaterThanOrEqual(bytes[index - 1]!.readUIntBE(0, 6));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('hashes secrets with a key: same input same hash, other key other hash', () => {
    const a = createSecretHasher(Buffer.alloc(32, 1));
    const b = createSecretHasher(Buffer.alloc(32, 2));
    expect(a.hash('secret')).toBe(a.hash('secret'));
    expect(a.hash('secret')).not.toBe(b.hash('secret'));
    expect(a.hash('secret')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('random tokens', () => {
  it('never repeats, across many pool refills, and has the requested size', async () => {
    const { randomToken } = await import('./identifiers.js');
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i += 1) seen.add(randomToken(16));
    expect(seen.size).toBe(20_000);
    expect(Buffer.from(randomToken(32), 'base64url')).toHaveLength(32);
  });
});
