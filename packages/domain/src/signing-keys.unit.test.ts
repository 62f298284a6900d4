import { describe, expect, it } from 'vitest';
import type { SigningKeyEvent, SigningKeyPublished } from '@tessera/contracts';
import { DomainError } from './errors.js';
import { activeSigningKeys, decideSigningKeys, evolveSigningKeys, initialSigningKeysState, type SigningKeyCommand } from './signing-keys.js';

const now = 1_800_000_000;
const published = (kid: string): SigningKeyPublished => ({
  type: 'SigningKeyPublished',
  v: 1,
  kid,
  alg: 'ES256',
  publicJwk: { kty: 'EC', crv: 'P-256', x: 'x'.repeat(43), y: 'y'.repeat(43) },
  at: now,
});
const retired = (kid: string): SigningKeyEvent => ({ type: 'SigningKeyRetired', v: 1, kid, at: now, retainUntil: now + 3660 });
const rotate = (named: string[], heldHere: string[]): SigningKeyCommand => ({
  type: 'RotateSigningKeys',
  published: published('new'),
  named,
  heldHere,
  now,
  retainUntil: now + 3660,
});
const given = (history: SigningKeyEvent[]) => history.reduce(evolveSigningKeys, initialSigningKeysState());

describe('signing-key decider', () => {
  it('folds keys in publication order, retired ones left out of the active list, and a repeated event changes nothing', () => {
    const state = given([published('a'), published('b'), published('c'), retired('b'), published('a'), retired('b')]);
    expect(state.published).toEqual(['a', 'b', 'c']);
    expect(activeSigningKeys(state)).toEqual(['a', 'c']);
  });

  it('rotating publishes the new key first, then retires the active keys held here and those named', () => {
    const events = decideSigningKeys(rotate(['c'], ['a']), given([published('a'), published('b'), published('c')]));
    expect(events.map((e) => [e.type, e.kid])).toEqual([
      ['SigningKeyPublished', 'new'],
      ['SigningKeyRetired', 'a'],
      ['SigningKeyRetired', 'c'],
    ]);
    expect(events[1]).toMatchObject({ at: now, retainUntil: now + 3660 });
  });

  it('rotating with no key held here and none named only publishes', () => {
    expect(decideSigningKeys(rotate([], []), given([published('a')])).map((e) => e.type)).toEqual(['SigningKeyPublished']);
  });

  it('refuses to retire by name a key that is unknown or already retired', () => {
    const state = given([published('a'), retired('a')]);
    const refusal = (() => {
      try {
        decideSigningKeys(rotate(['a', 'zzz'], []), state);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({ code: 'ERR_SIGNING_KEY_NOT_FOUND', message: 'no active signing key a, zzz' });
  });
});
