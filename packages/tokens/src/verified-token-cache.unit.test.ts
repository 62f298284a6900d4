import { beforeAll, describe, expect, it } from 'vitest';
import type { AccessTokenClaims } from '@tessera/contracts';
import { signAccessToken } from './access-token.js';
import { PublicKeySet } from './key-set.js';
import { generateSigningKey, signingKeyFromJwk, type SigningKey } from './signing-key.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

const now = 1_800_000_000;
let key: SigningKey;
let keys: PublicKeySet;
const token = (exp = now + 3600, jti = 'j') =>
  signAccessToken({ iss: 'i', sub: 's', aud: 'tessera:v5', client_id: 'c', iat: now, exp, jti, scope: '' } satisfies AccessTokenClaims, key);

beforeAll(async () => {
  const generated = await generateSigningKey();
  key = signingKeyFromJwk(generated.kid, generated.privateJwk);
  keys = new PublicKeySet();
  keys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now });
});

describe('VerifiedTokenCache', () => {
  it('keeps verified tokens and answers them again', () => {
    const cache = new VerifiedTokenCache(keys);
    const t = token();
    expect(cache.verify(t, now).ok).toBe(true);
    expect(cache.size).toBe(1);
    expect(cache.verify(t, now + 1)).toMatchObject({ ok: true, kid: key.kid });
    expect(cache.size).toBe(1);
  });

  it('never keeps a forged or tampered token', () => {
    const cache = new VerifiedTokenCache(keys);
    const [h, p] = token().split('.');
    expect(cache.verify(`${h}.${p}.${'A'.repeat(86)}`, now).ok).toBe(false);
    expect(cache.size).toBe(0);
  });

  it('a token with a cached token\'s signature under another header or payload is no hit: it fails verification, and the cached one still verifies', () => {
    const cache = new VerifiedTokenCache(keys);
    const good = token(now + 3600, 'good');
    expect(cache.verify(good, now).ok).toBe(true);
    const [header, , signature] = good.split('.');
    const [, otherPayload] = token(now + 3600, 'other').split('.');
    expect(cache.verify(`${header}.${otherPayload}.${signature}`, now)).toEqual({ ok: false, code: 'ERR_TOKEN_SIGNATURE' });
    expect(cache.verify(good, now)).toMatchObject({ ok: true, kid: key.kid, claims: { jti: 'good' } });
    expect(cache.size).toBe(1);
  });

  it('cached() answers only a verified token, exactly, and never verifies one itself', () => {
    const cache = new VerifiedTokenCache(keys);
    const t = token(now + 3600, 'c');
    expect(cache.cached(t, now)).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.verify(t, now);
    expect(cache.cached(t, now)).toMatchObject({ ok: true, claims: { jti: 'c' } });
    expect(cache.cached(`${t} `, now)).toBeUndefined();
    expect(cache.cached(`x${t}`, now)).toBeUndefined();
    expect(cache.cached(t, now + 3600)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops a token once it has expired', () => {
    const cache = new VerifiedTokenCache(keys);
    const t = token(now + 10);
    cache.verify(t, now);
    expect(cache.verify(t, now + 10).ok).toBe(true);
    expect(cache.size).toBe(0);
  });

  it('stops answering from the cache once the signing key is past its retention', async () => {
    const set = new PublicKeySet();
    set.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now });
    const cache = new VerifiedTokenCache(set);
    const t = token();
    expect(cache.verify(t, now).ok).toBe(true);
    set.apply({ type: 'SigningKeyRetired', v: 1, kid: key.kid, at: now, retainUntil: now + 5 });
    expect(cache.verify(t, now + 5)).toEqual({ ok: false, code: 'ERR_TOKEN_UNKNOWN_KEY' });
  });

  it('when full, drops the expired entries at its front first, then the oldest live one', () => {
    const cache = new VerifiedTokenCache(keys, 3);
    for (let i = 0; i < 3; i += 1) cache.verify(token(now + 10, `short${i}`), now);
    expect(cache.size).toBe(3);
    cache.verify(token(now + 3600, 'live1'), now + 20);
    expect(cache.size).toBe(1);
    cache.verify(token(now + 3600, 'live2'), now + 20);
    cache.verify(token(now + 3600, 'live3'), now + 20);
    cache.verify(token(now + 3600, 'live4'), now + 20);
    expect(cache.size).toBe(3);
  });

  it('stays within its bound', () => {
    const cache = new VerifiedTokenCache(keys, 3);
    for (let i = 0; i < 10; i += 1) cache.verify(token(now + 3600, `j${i}`), now);
    expect(cache.size).toBeLessThanOrEqual(3);
  });
});
