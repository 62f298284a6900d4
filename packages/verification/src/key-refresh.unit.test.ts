import { describe, expect, it } from 'vitest';
import { PublicKeySet, generateSigningKey, signAccessToken, signingKeyFromJwk } from '@tessera/tokens';
import { createBearerVerifier } from './bearer-verifier.js';
import { createKeyRefresh } from './key-refresh.js';
import { RevocationProjection } from './revocation-projection.js';

describe('createKeyRefresh', () => {
  it('runs one load for concurrent callers, and none again within the cooldown', async () => {
    let clock = 0;
    let loads = 0;
    let finish: () => void = () => undefined;
    const refresh = createKeyRefresh(
      () => {
        loads += 1;
        return new Promise<void>((resolve) => (finish = resolve));
      },
      { cooldownMs: 1_000, now: () => clock },
    );
    const callers = [refresh(), refresh(), refresh()];
    finish();
    await Promise.all(callers);
    expect(loads).toBe(1);
    clock = 999;
    await refresh();
    expect(loads).toBe(1);
    clock = 1_000;
    const again = refresh();
    finish();
    await again;
    expect(loads).toBe(2);
  });

  it('a failed load resolves: the caller answers from the keys it has', async () => {
    const refresh = createKeyRefresh(() => Promise.reject(new Error('issuer unreachable')), { cooldownMs: 1_000 });
    await expect(refresh()).resolves.toBeUndefined();
  });
});

describe('BearerVerifier.check with a key refresh', () => {
  const now = 1_800_000_000;
  const issuer = 'urn:tessera:issuer';
  const requirement = { interface: 'v5', permission: 'transaction:charge' } as const;

  async function setting(options: { refreshFinds: boolean }) {
    const generated = await generateSigningKey();
    const key = signingKeyFromJwk(generated.kid, generated.privateJwk);
    const keys = new PublicKeySet();
    let refreshes = 0;
    const verifier = createBearerVerifier({
      keys,
      projection: new RevocationProjection(),
      issuer,
      now: () => now,
      refreshKeys: async () => {
        refreshes += 1;
        if (options.refreshFinds) keys.apply({ type: 'SigningKeyPublished', v: 1, kid: key.kid, alg: 'ES256', publicJwk: key.publicJwk, at: now });
      },
    });
    const token = signAccessToken(
      { iss: issuer, sub: 'acc', aud: 'tessera:v5', client_id: 'login', iat: now, exp: now + 3600, jti: 'j', scope: 'transaction:charge', fid: 'fam', gen: 0 },
      key,
    );
    return { verifier, authorization: `Bearer ${token}`, refreshes: () => refreshes };
  }

  it('a token signed by a key published a moment ago passes once the refresh has found the key', async () => {
    const { verifier, authorization, refreshes } = await setting({ refreshFinds: true });
    expect(verifier.decide(authorization, requirement)).toMatchObject({ status: 401, code: 'ERR_TOKEN_UNKNOWN_KEY' });
    expect(await verifier.check(authorization, requirement)).toMatchObject({ status: 200 });
    expect(refreshes()).toBe(1);
    expect(await verifier.check(authorization, requirement)).toMatchObject({ status: 200 });
    expect(refreshes()).toBe(1);
  });

  it('a kid that no refresh finds stays 401', async () => {
    const { verifier, authorization, refreshes } = await setting({ refreshFinds: false });
    expect(await verifier.check(authorization, requirement)).toMatchObject({ status: 401, code: 'ERR_TOKEN_UNKNOWN_KEY' });
    expect(refreshes()).toBe(1);
  });

  it('other refusals do not trigger a refresh', async () => {
    const { verifier, refreshes } = await setting({ refreshFinds: true });
    expect(await verifier.check('Bearer not.a.token', requirement)).toMatchObject({ status: 401 });
    expect(await verifier.check(undefined, requirement)).toMatchObject({ status: 401, code: 'ERR_TOKEN_MISSING' });
    expect(refreshes()).toBe(0);
  });
});
