import { describe, expect, it } from 'vitest';
import { EgressError, type EgressResponse } from '@tessera/egress';
import { ManualClock } from '@tessera/timing';
import { createClientKeySource, maxAgeOf, withoutQuery } from './client-key-source.js';
import { IssuerRefusal } from './issuer-errors.js';

const key = (kid: string) => ({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid });
const url = 'https://keys.example.test/jwks.json?token=s3cret';

/** A client's server as the egress policy would answer for it: scripted answers, each call counted. */
function scripted() {
  const calls: string[] = [];
  let answer: () => Promise<EgressResponse> = async () => ok({ keys: [key('k1')] });
  const warnings: { details: object; message: string }[] = [];
  const clock = new ManualClock(1_000_000);
  const source = createClientKeySource({
    fetch: async (target) => {
      calls.push(target);
      return answer();
    },
    clock,
    log: { warn: (details, message) => warnings.push({ details, message }) },
  });
  return { source, calls, warnings, clock, answer: (next: () => Promise<EgressResponse>) => (answer = next) };
}

const ok = (jwks: unknown, cacheControl?: string): EgressResponse => ({ status: 200, headers: cacheControl ? { 'cache-control': cacheControl } : {}, body: Buffer.from(JSON.stringify(jwks)) });
const kids = (keys: readonly { kid: string }[]) => keys.map((jwk) => jwk.kid);

describe('client keys at a URL: cache', () => {
  it('keeps the keys for their max-age, held within 60 s and 24 h, 5 minutes by default', () => {
    expect(maxAgeOf(undefined)).toBe(300);
    expect(maxAgeOf('public, max-age=600')).toBe(600);
    expect(maxAgeOf('max-age=0')).toBe(60);
    expect(maxAgeOf('no-store')).toBe(300);
    expect(maxAgeOf('max-age=31536000, immutable')).toBe(86_400);
    expect(maxAgeOf('s-maxage=10')).toBe(300);
  });

  it('fetches once per max-age, and shares one fetch between concurrent requests', async () => {
    const { source, calls, clock, answer } = scripted();
    answer(async () => ok({ keys: [key('k1')] }, 'max-age=120'));
    const [a, b, c] = await Promise.all([source.keysOf('acc', url), source.keysOf('acc', url), source.keysOf('acc', url)]);
    expect([a.fetched, b.fetched, c.fetched]).toEqual([true, true, true]);
    expect(calls).toHaveLength(1);
    clock.advance(119_000);
    expect(await source.keysOf('acc', url)).toMatchObject({ fetched: false });
    expect(calls).toHaveLength(1);
    clock.advance(2000);
    expect(await source.keysOf('acc', url)).toMatchObject({ fetched: true });
    expect(calls).toHaveLength(2);
  });

  it('a new URL for the account is a new entry', async () => {
    const { source, calls } = scripted();
    await source.keysOf('acc', url);
    await source.keysOf('acc', 'https://keys.example.test/other.json');
    expect(calls).toEqual([url, 'https://keys.example.test/other.json']);
  });
});

describe('client keys at a URL: failures', () => {
  it('a failure is invalid_client naming nothing of the fetch, logged at warn without the query', async () => {
    const { source, warnings, answer } = scripted();
    answer(async () => {
      throw new EgressError('refused', 'keys.example.test resolves to a refused address (10.0.0.1: private)');
    });
    const refusal = await source.keysOf('acc', url).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(IssuerRefusal);
    expect((refusal as IssuerRefusal).message).toBe('the client\'s keys could not be fetched');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.details).toEqual({ accountId: 'acc', jwksUrl: 'https://keys.example.test/jwks.json', reason: expect.stringContaining('refused address') });
    expect(JSON.stringify(warnings)).not.toContain('s3cret');
    expect(withoutQuery('https://k.example.test:8443/a/b?x=1#y')).toBe('https://k.example.test:8443/a/b');
  });

  it.each([
    ['a status other than 200', { status: 302, headers: { location: 'http://169.254.169.254/' }, body: Buffer.alloc(0) }],
    ['an answer that is not JSON', { status: 200, headers: {}, body: Buffer.from('<html>') }],
    ['a private key', ok({ keys: [{ ...key('k1'), d: 'secret' }] })],
    ['more than 10 keys', ok({ keys: Array.from({ length: 11 }, (_, index) => key(`k${index}`)) })],
  ])('refuses %s, as keys from a file would be', async (_what, response: EgressResponse) => {
    const { source, answer } = scripted();
    answer(async () => response);
    await expect(source.keysOf('acc', url)).rejects.toBeInstanceOf(IssuerRefusal);
  });

  it('uses expired keys up to an hour past expiry while fetches fail, pausing 10 s after each failure', async () => {
    const { source, calls, clock, answer } = scripted();
    expect(kids((await source.keysOf('acc', url)).keys)).toEqual(['k1']);
    answer(async () => {
      throw new EgressError('timeout', 'keys.example.test did not answer within 2000 ms');
    });
    clock.advance(300_000);
    expect(kids((await source.keysOf('acc', url)).keys)).toEqual(['k1']);
    expect(calls).toHaveLength(2);
    // Within the pause: the stale keys at once, no fetch.
    clock.advance(5000);
    expect(kids((await source.keysOf('acc', url)).keys)).toEqual(['k1']);
    expect(calls).toHaveLength(2);
    clock.advance(3_600_000);
    await expect(source.keysOf('acc', url)).rejects.toBeInstanceOf(IssuerRefusal);
    expect(calls).toHaveLength(3);
  });
});

describe('client keys at a URL: refetch on an unknown kid', () => {
  it('refetches at most once a minute per account', async () => {
    const { source, calls, clock, answer } = scripted();
    await source.keysOf('acc', url);
    answer(async () => ok({ keys: [key('k2')] }));
    expect(kids((await source.refetch('acc', url))!)).toEqual(['k2']);
    expect(await source.refetch('acc', url)).toBeUndefined();
    // Another account has its own minute.
    expect(await source.refetch('other', url)).toBeDefined();
    expect(calls).toHaveLength(3);
    clock.advance(60_000);
    expect(await source.refetch('acc', url)).toBeDefined();
    expect(calls).toHaveLength(4);
  });
});
