import { describe, expect, it } from 'vitest';
import { streams, type RecordedEvent, type TesseraEvent, type TokenIssued } from '@tessera/events';
import { InMemoryEventStore } from '@tessera/event-store';
import { AccountFamilies } from './account-families.js';
import { longestLiveTokenLifetime } from './token-lifetimes.js';

const t0 = 1_900_000_000;
const hash = 'A'.repeat(43);
let position = 0n;
const recorded = (event: TesseraEvent): RecordedEvent => {
  position += 1n;
  return { eventId: `e${position}`, stream: 's', revision: 0n, position, event, metadata: {}, recordedAt: t0 * 1000 };
};
const issued = (familyId: string, accountId: string, at: number, accessSeconds = 3600, refreshSeconds = 86_400): TokenIssued => ({
  type: 'TokenIssued',
  v: 1,
  familyId,
  accountId,
  credentialId: 'cred',
  apiLoginId: 'tsl_x',
  generation: 0,
  refreshTokenHash: hash,
  jti: `${familyId}-0`,
  scope: [],
  issuedAt: at,
  accessExpiresAt: at + accessSeconds,
  refreshExpiresAt: at + refreshSeconds,
});
const revoked = (familyId: string, accountId: string, at: number): TesseraEvent => ({ type: 'TokenRevoked', v: 1, familyId, accountId, generation: 0, revokedAt: at, accessExpiresAt: at + 3600, rejectsUntil: at + 3600 });
const legacy = (accountId: string, at: number, seconds: number): TesseraEvent => ({ type: 'LegacyTokenIssued', v: 1, accountId, credentialId: 'l', apiId: 'tla_x', jti: `j${at}`, issuedAt: at, expiresAt: at + seconds });

describe('AccountFamilies', () => {
  it('with a clock, never stores a family already dead when its event is read, and drops one whose newest event is dead', () => {
    const families = new AccountFamilies(() => t0);
    for (const event of [issued('old', 'a', t0 - 200_000), issued('fresh', 'a', t0 - 10), issued('refreshed-dead', 'a', t0 - 10), issued('refreshed-dead', 'a', t0 - 200_000)]) {
      families.apply(recorded(event));
    }
    expect(families.size).toBe(1);
    expect(families.liveFamilies('a', t0)).toEqual(['fresh']);
  });

  it('lists the families of an account that are neither revoked nor past their refresh and access expiry', () => {
    const families = new AccountFamilies();
    for (const event of [issued('f1', 'a', t0), issued('f2', 'a', t0), issued('f3', 'a', t0, 60, 120), issued('g1', 'b', t0), revoked('f2', 'a', t0 + 1)]) families.apply(recorded(event));
    expect(families.liveFamilies('a', t0 + 100).sort()).toEqual(['f1', 'f3']);
    expect(families.liveFamilies('a', t0 + 120)).toEqual(['f1']);
    expect(families.liveFamilies('nobody', t0)).toEqual([]);
  });

  it('pages an account\'s live families in family id order after a cursor, and says whether more follow', () => {
    const families = new AccountFamilies();
    for (const familyId of ['f4', 'f1', 'f3', 'f2', 'f5']) families.apply(recorded(issued(familyId, 'a', t0)));
    families.apply(recorded(issued('g1', 'b', t0)));
    families.apply(recorded(revoked('f3', 'a', t0 + 1)));
    expect(families.liveFamiliesPage('a', t0 + 10, undefined, 2)).toEqual({ familyIds: ['f1', 'f2'], more: true });
    expect(families.liveFamiliesPage('a', t0 + 10, 'f2', 2)).toEqual({ familyIds: ['f4', 'f5'], more: false });
    expect(families.liveFamiliesPage('a', t0 + 10, 'f5', 2)).toEqual({ familyIds: [], more: false });
    expect(families.liveFamiliesPage('nobody', t0, undefined, 2)).toEqual({ familyIds: [], more: false });
  });

  it('keeps a refreshed family until its newest refresh token expires, and forgets the others from the front', () => {
    const families = new AccountFamilies();
    families.apply(recorded(issued('f1', 'a', t0)));
    families.apply(recorded(issued('f2', 'a', t0)));
    families.apply(recorded({ ...issued('f1', 'a', t0 + 50_000), type: 'TokenRotated', generation: 1 }));
    expect(families.forgetExpired(t0 + 86_400)).toBe(1);
    expect(families.liveFamilies('a', t0 + 86_400)).toEqual(['f1']);
    expect(families.size).toBe(1);
  });

  it('knows the longest token lifetime of every v5 and v1 token read, and the position it reached', async () => {
    const families = new AccountFamilies();
    expect(families.longestTokenLifetime).toBe(0);
    families.apply(recorded(issued('f1', 'a', t0, 3600)));
    families.apply(recorded(legacy('a', t0, 7200)));
    families.apply(recorded(issued('f2', 'a', t0, 5)));
    expect(families.longestTokenLifetime).toBe(7200);
    const waiting = families.reached(position + 1n, 1_000);
    families.apply(recorded({ type: 'AccountTokensRevoked', v: 1, accountId: 'a', notBefore: t0, rejectsUntil: t0, reason: 'operator', at: t0 }));
    expect(await waiting).toBe(true);
    expect(await families.reached(position + 5n, 10)).toBe(false);
  });
});

describe('longestLiveTokenLifetime', () => {
  it('reads the tokens issued since the oldest signing key still usable, skipping older ones, from the events and not from configuration', async () => {
    let clockMs = t0 * 1000;
    const store = new InMemoryEventStore({ clock: { now: () => clockMs } });
    const at = async (seconds: number, stream: string, event: TesseraEvent) => {
      clockMs = seconds * 1000;
      await store.append(stream, [{ event }], { expectedRevision: 'any' });
    };
    const key = (kid: string, seconds: number): TesseraEvent => ({ type: 'SigningKeyPublished', v: 1, kid, alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, at: seconds });
    expect(await longestLiveTokenLifetime(store, t0)).toBe(0);
    await at(t0, streams.signingKeys(), key('k1', t0));
    // Under k1: a day-long token, whose key is refused from t0 + 200 on.
    await at(t0 + 1, streams.family('old'), issued('old', 'a', t0 + 1, 86_400));
    await at(t0 + 100, streams.signingKeys(), key('k2', t0 + 100));
    await at(t0 + 100, streams.signingKeys(), { type: 'SigningKeyRetired', v: 1, kid: 'k1', at: t0 + 100, retainUntil: t0 + 200 });
    await at(t0 + 101, streams.family('new'), issued('new', 'a', t0 + 101, 600));
    await at(t0 + 102, streams.legacyTokens('a'), legacy('a', t0 + 102, 1800));
    expect(await longestLiveTokenLifetime(store, t0 + 150)).toBe(86_400);
    expect(await longestLiveTokenLifetime(store, t0 + 200)).toBe(1800);
  });
});
