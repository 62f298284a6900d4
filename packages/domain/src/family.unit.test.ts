import { describe, expect, it } from 'vitest';
import type { FamilyEvent } from '@tessera/contracts';
import { DomainError } from './errors.js';
import type { PresentedSecret } from './constant-time.js';
import { decideFamily, evolveFamily, initialFamilyState, type FamilyCommand, type RefreshReusePolicy } from './family.js';

const hash = (c: string) => c.repeat(43);
const lifetimes = { accessTokenSeconds: 3600, refreshTokenSeconds: 604800 };
const t0 = 1_800_000_000;

const issue: Extract<FamilyCommand, { type: 'IssueToken' }> = {
  type: 'IssueToken',
  familyId: 'fam',
  accountId: 'acc',
  credentialId: 'cred',
  apiLoginId: 'login',
  refreshTokenHash: hash('a'),
  hashingKey: 'K'.repeat(22),
  jti: 'jti-0',
  scope: ['transaction:charge'],
  now: t0,
  lifetimes,
};
const rotate = (
  presented: string,
  now: number,
  next = hash('b'),
  accessTokenSeconds = lifetimes.accessTokenSeconds,
  refreshReuse: RefreshReusePolicy = 'keep',
): FamilyCommand => ({
  type: 'RotateToken',
  presentedRefreshToken: () => presented,
  newRefreshTokenHash: next,
  hashingKey: 'K'.repeat(22),
  jti: `jti-${next[0]}`,
  scope: ['transaction:charge'],
  now,
  lifetimes: { ...lifetimes, accessTokenSeconds },
  refreshReuse,
});
/** A refresh under TESSERA_REFRESH_REUSE=revoke-family. */
const rotateRevokingOnReuse = (presented: string, now: number, next = hash('b')) => rotate(presented, now, next, lifetimes.accessTokenSeconds, 'revoke-family');
const revoke = (presented: string, now: number): FamilyCommand => ({ type: 'RevokeToken', presentedRefreshToken: () => presented, now });

/** given(events).when(command) → then(events) | thenThrows(code) */
function given(history: FamilyEvent[]) {
  const state = history.reduce(evolveFamily, initialFamilyState());
  return {
    when(command: FamilyCommand) {
      const run = () => decideFamily(command, state);
      return {
        then: (check: (events: FamilyEvent[]) => void) => check(run()),
        thenThrows: (code: string) => {
          let thrown: unknown;
          try {
            run();
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(DomainError);
          expect((thrown as DomainError).code).toBe(code);
        },
      };
    },
  };
}

const issued = decideFamily(issue, initialFamilyState());
const rotated = decideFamily(rotate(hash('a'), t0 + 10), issued.reduce(evolveFamily, initialFamilyState()));
const revokedAfterIssue = decideFamily(revoke(hash('a'), t0 + 10), issued.reduce(evolveFamily, initialFamilyState()));

describe('access token states, current interface', () => {
  it('(none) → valid by get-oauth-token with valid credentials, and a refresh token is issued with it', () => {
    given([]).when(issue).then((events) => {
      expect(events).toHaveLength(1);
      const [event] = events;
      expect(event).toMatchObject({ type: 'TokenIssued', generation: 0, refreshTokenHash: hash('a'), jti: 'jti-0' });
      expect(event?.type === 'TokenIssued' && event.accessExpiresAt - event.issuedAt).toBe(3600);
    });
  });

  it('valid → expired 60 minutes after issue: the issued access token carries that expiry', () => {
    given([]).when(issue).then(([event]) => {
      expect(event?.type === 'TokenIssued' && event.accessExpiresAt).toBe(t0 + 60 * 60);
    });
  });

  it('valid → invalid (replaced) by refresh-oauth-token: generation moves on, so the old token is below it', () => {
    given(issued).when(rotate(hash('a'), t0 + 10)).then(([event]) => {
      expect(event).toMatchObject({ type: 'TokenRotated', generation: 1, familyId: 'fam', refreshTokenHash: hash('b') });
    });
  });

  it('valid → invalid by revoke-oauth-token: the revocation covers the current generation', () => {
    given(issued).when(revoke(hash('a'), t0 + 10)).then(([event]) => {
      expect(event).toMatchObject({ type: 'TokenRevoked', generation: 0, familyId: 'fam', accessExpiresAt: t0 + 3600 });
    });
  });
});

describe('refresh token states, current interface', () => {
  it('(none) → valid by get-oauth-token', () => {
    given([]).when(issue).then(([event]) => {
      expect(event).toMatchObject({ type: 'TokenIssued', refreshExpiresAt: t0 + 604800 });
    });
  });

  it('(none) → valid by refresh-oauth-token: the new refresh token is valid for 7 days from its own issue', () => {
    const later = t0 + 86_400;
    given(issued).when(rotate(hash('a'), later)).then(([event]) => {
      expect(event).toMatchObject({ type: 'TokenRotated', refreshExpiresAt: later + 604800 });
    });
  });

  it('valid → expired 7 days after issue: refresh is refused', () => {
    given(issued).when(rotate(hash('a'), t0 + 604800)).thenThrows('ERR_REFRESH_TOKEN_EXPIRED');
  });

  it('valid → used by refresh-oauth-token: a second refresh with it is refused', () => {
    given([...issued, ...rotated]).when(rotate(hash('a'), t0 + 20, hash('c'))).thenThrows('ERR_REFRESH_TOKEN_USED');
  });

  it('valid → revoked by revoke-oauth-token', () => {
    given(issued).when(revoke(hash('a'), t0 + 10)).then(([event]) => expect(event?.type).toBe('TokenRevoked'));
  });

  it('used → unchanged, refresh answers 401', () => {
    given([...issued, ...rotated]).when(rotate(hash('a'), t0 + 20)).thenThrows('ERR_REFRESH_TOKEN_USED');
  });

  it('revoked → unchanged, refresh answers 401', () => {
    given([...issued, ...revokedAfterIssue]).when(rotate(hash('a'), t0 + 20)).thenThrows('ERR_REFRESH_TOKEN_REVOKED');
  });

  it('expired → unchanged, refresh answers 401', () => {
    given(issued).when(rotate(hash('a'), t0 + 604800 + 1)).thenThrows('ERR_REFRESH_TOKEN_EXPIRED');
  });
});

describe('family edge cases', () => {
  it('refuses a refresh token that was never issued for this family', () => {
    given([]).when(rotate(hash('a'), t0)).thenThrows('ERR_REFRESH_TOKEN_INVALID');
    given(issued).when(rotate(hash('z'), t0 + 1)).thenThrows('ERR_REFRESH_TOKEN_USED');
  });

  it('refuses to revoke twice, or with a used token', () => {
    given([...issued, ...revokedAfterIssue]).when(revoke(hash('a'), t0 + 20)).thenThrows('ERR_REFRESH_TOKEN_REVOKED');
    given([...issued, ...rotated]).when(revoke(hash('a'), t0 + 20)).thenThrows('ERR_REFRESH_TOKEN_USED');
  });

  it('revoking after a rotation covers the newest generation', () => {
    given([...issued, ...rotated]).when(revoke(hash('b'), t0 + 30)).then(([event]) => {
      expect(event).toMatchObject({ type: 'TokenRevoked', generation: 1, accessExpiresAt: t0 + 10 + 3600 });
    });
  });

  it('loads from the last event alone, as the issuer does: the same state, except that the used tokens are unknown', () => {
    const full = [...issued, ...rotated].reduce(evolveFamily, initialFamilyState());
    const lastOnly = evolveFamily(initialFamilyState(), rotated[0]!);
    expect(full).toMatchObject({ usedRefreshTokens: [{ hash: hash('a'), hashingKey: 'K'.repeat(22) }] });
    expect(lastOnly).toMatchObject({ usedRefreshTokens: undefined });
    expect(lastOnly).toEqual({ ...full, usedRefreshTokens: undefined });
  });

  it('refuses to issue into an existing family', () => {
    given(issued).when(issue).thenThrows('ERR_FAMILY_EXISTS');
  });
});

/** A rotated-away or revoked token must never become valid again. */
describe('rejectsUntil: how long a rotation or revocation must be remembered', () => {
  /** Runs the commands in order, each against the state the events so far give. */
  function run(commands: FamilyCommand[]): FamilyEvent[] {
    const history: FamilyEvent[] = [];
    for (const command of commands) history.push(...decideFamily(command, history.reduce(evolveFamily, initialFamilyState())));
    return history;
  }

  it('a rotation rejects the earlier generations until the last of their tokens expires, not until the new one does', () => {
    const [, rotation] = run([issue, rotate(hash('a'), t0 + 10)]);
    expect(rotation).toMatchObject({ type: 'TokenRotated', generation: 1, accessExpiresAt: t0 + 10 + 3600, rejectsUntil: t0 + 3600 });
  });

  it('with the TTL lowered between generations, every later rotation and the revocation still cover the first long-lived token', () => {
    const events = run([issue, rotate(hash('a'), t0 + 10, hash('b'), 5), rotate(hash('b'), t0 + 12, hash('c'), 5), revoke(hash('c'), t0 + 14)]);
    expect(events.slice(1).map((e) => e.type !== 'TokenIssued' && [e.accessExpiresAt, e.rejectsUntil])).toEqual([
      [t0 + 15, t0 + 3600],
      [t0 + 17, t0 + 3600],
      [t0 + 17, t0 + 3600],
    ]);
  });

  it('with an issuer whose clock lags, the rotation still covers the earlier token, which expires after the new one', () => {
    const lagging = t0 - 100;
    const events = run([issue, rotate(hash('a'), lagging), revoke(hash('b'), lagging + 1)]);
    expect(events[1]).toMatchObject({ type: 'TokenRotated', accessExpiresAt: lagging + 3600, rejectsUntil: t0 + 3600 });
    expect(events[2]).toMatchObject({ type: 'TokenRevoked', accessExpiresAt: lagging + 3600, rejectsUntil: t0 + 3600 });
  });

  it('a revocation right after issue rejects generation 0 until its own expiry', () => {
    const [, revocation] = run([issue, revoke(hash('a'), t0 + 10)]);
    expect(revocation).toMatchObject({ type: 'TokenRevoked', generation: 0, rejectsUntil: t0 + 3600 });
  });

  it('an event written before rejectsUntil existed implies it equals accessExpiresAt', () => {
    const [, rotation] = run([issue, rotate(hash('a'), t0 + 10)]);
    if (rotation?.type !== 'TokenRotated') throw new Error('expected a rotation');
    const older = { ...rotation };
    delete older.rejectsUntil;
    const next = decideFamily(revoke(hash('b'), t0 + 20), evolveFamily(initialFamilyState(), older));
    expect(next[0]).toMatchObject({ type: 'TokenRevoked', rejectsUntil: t0 + 10 + 3600 });
  });

  it('the state loaded from the last event alone, as the issuer loads it, remembers the first long-lived expiry', () => {
    const events = run([issue, rotate(hash('a'), t0 + 10, hash('b'), 5), rotate(hash('b'), t0 + 12, hash('c'), 5)]);
    expect(evolveFamily(initialFamilyState(), events[events.length - 1]!)).toMatchObject({
      status: 'active',
      accessExpiresAt: t0 + 17,
      lastAccessExpiresAt: t0 + 3600,
    });
  });
});

/** TESSERA_REFRESH_REUSE (RFC 9700 section 4.14.2), docs/decisions/0010. */
describe('reuse of a used refresh token', () => {
  const rotatedTwice = decideFamily(rotate(hash('b'), t0 + 20, hash('c')), [...issued, ...rotated].reduce(evolveFamily, initialFamilyState()));

  it('keep (the interface\'s rule, the default): a used token leaves the family unchanged and is refused as used', () => {
    given([...issued, ...rotated]).when(rotate(hash('a'), t0 + 30, hash('d'))).thenThrows('ERR_REFRESH_TOKEN_USED');
  });

  it('revoke-family: the token the last rotation used revokes the family at its newest generation, marked as a reuse', () => {
    given([...issued, ...rotated]).when(rotateRevokingOnReuse(hash('a'), t0 + 30, hash('d'))).then((events) => {
      expect(events).toEqual([
        {
          type: 'TokenRevoked',
          v: 1,
          familyId: 'fam',
          accountId: 'acc',
          generation: 1,
          revokedAt: t0 + 30,
          accessExpiresAt: t0 + 10 + 3600,
          rejectsUntil: t0 + 10 + 3600,
          reason: 'refresh-token-reused',
        },
      ]);
    });
  });

  it('revoke-family: a token used two rotations ago revokes the family too', () => {
    given([...issued, ...rotated, ...rotatedTwice]).when(rotateRevokingOnReuse(hash('a'), t0 + 30, hash('d'))).then((events) => {
      expect(events).toMatchObject([{ type: 'TokenRevoked', generation: 2, reason: 'refresh-token-reused' }]);
    });
  });

  it('revoke-family: a token this family never issued is refused as used and revokes nothing (the family id is public)', () => {
    given([...issued, ...rotated]).when(rotateRevokingOnReuse(hash('z'), t0 + 30, hash('d'))).thenThrows('ERR_REFRESH_TOKEN_USED');
  });

  it('revoke-family: on a state loaded from the last event alone, which cannot tell used from unknown, a used token is refused and revokes nothing', () => {
    const lastOnly = evolveFamily(initialFamilyState(), rotated[0]!);
    expect(() => decideFamily(rotateRevokingOnReuse(hash('a'), t0 + 30, hash('d')), lastOnly)).toThrow(
      expect.objectContaining({ code: 'ERR_REFRESH_TOKEN_USED' }),
    );
  });

  it('revoke-family: the current token still rotates, and a revoked family stays revoked', () => {
    given([...issued, ...rotated]).when(rotateRevokingOnReuse(hash('b'), t0 + 30, hash('d'))).then((events) => {
      expect(events).toMatchObject([{ type: 'TokenRotated', generation: 2 }]);
    });
    given([...issued, ...revokedAfterIssue]).when(rotateRevokingOnReuse(hash('a'), t0 + 30, hash('d'))).thenThrows('ERR_REFRESH_TOKEN_REVOKED');
  });

  it('the whole stream folded remembers every used token, oldest first', () => {
    const state = [...issued, ...rotated, ...rotatedTwice].reduce(evolveFamily, initialFamilyState());
    expect(state).toMatchObject({
      status: 'active',
      refreshTokenHash: hash('c'),
      usedRefreshTokens: [
        { hash: hash('a'), hashingKey: 'K'.repeat(22) },
        { hash: hash('b'), hashingKey: 'K'.repeat(22) },
      ],
    });
  });
});

/** Secret-hashing keys are rotated: a family's hashes name the key each was made with. */
describe('a family across a rotation of the secret-hashing key', () => {
  const [oldKey, newKey] = ['O'.repeat(22), 'N'.repeat(22)];
  /** A stand-in for the keyed hash: what `token` hashes to under each key differs. */
  const presentedAs =
    (token: string): PresentedSecret =>
    (hashingKey) =>
      `${token} under ${hashingKey ?? 'the first key'}`;
  const keyedHash = (token: string, key: string) => presentedAs(token)(key);
  const issuedUnderOld = decideFamily({ ...issue, refreshTokenHash: keyedHash('a', oldKey), hashingKey: oldKey }, initialFamilyState());
  const rotateUnderNew = (presented: string | PresentedSecret, now: number, next: string, refreshReuse: RefreshReusePolicy = 'keep'): FamilyCommand => ({
    type: 'RotateToken',
    presentedRefreshToken: typeof presented === 'string' ? presentedAs(presented) : presented,
    newRefreshTokenHash: keyedHash(next, newKey),
    hashingKey: newKey,
    jti: `jti-${next}`,
    scope: [],
    now,
    lifetimes,
    refreshReuse,
  });

  it('a refresh token hashed under the old key still refreshes, and its successor is hashed under the new key and says so', () => {
    given(issuedUnderOld).when(rotateUnderNew('a', t0 + 10, 'b')).then(([event]) => {
      expect(event).toMatchObject({ type: 'TokenRotated', generation: 1, refreshTokenHash: keyedHash('b', newKey), hashingKey: newKey });
    });
  });

  it('the presented token is hashed under the key the stored hash names: under another key it does not match', () => {
    const underNewOnly: PresentedSecret = () => keyedHash('a', newKey);
    given(issuedUnderOld).when(rotateUnderNew(underNewOnly, t0 + 10, 'b')).thenThrows('ERR_REFRESH_TOKEN_USED');
  });

  it('a hash with no key named was made with the log\'s first key', () => {
    // An event of an older writer: no hashingKey field at all.
    const unnamed = { ...(issuedUnderOld[0] as Extract<FamilyEvent, { type: 'TokenIssued' }>), refreshTokenHash: presentedAs('a')(undefined) };
    delete unnamed.hashingKey;
    const history: FamilyEvent[] = [unnamed];
    given(history).when(rotateUnderNew('a', t0 + 10, 'b')).then(([event]) => expect(event).toMatchObject({ type: 'TokenRotated', hashingKey: newKey }));
  });

  it('revoke-family recognises a used token hashed under the old key after the family moved to the new one', () => {
    const rotatedUnderNew = decideFamily(rotateUnderNew('a', t0 + 10, 'b'), issuedUnderOld.reduce(evolveFamily, initialFamilyState()));
    given([...issuedUnderOld, ...rotatedUnderNew]).when(rotateUnderNew('a', t0 + 20, 'c', 'revoke-family')).then(([event]) => {
      expect(event).toMatchObject({ type: 'TokenRevoked', reason: 'refresh-token-reused' });
    });
  });
});

/** An operator revokes a family without its refresh token (POST /admin/v1/families/{id}/revoke). */
describe('operator revocation of a family', () => {
  const byOperator = (now: number): FamilyCommand => ({ type: 'RevokeFamily', now });

  it('revokes an active family at its newest generation, covering every generation until the last expiry, with no reason an older reader would refuse', () => {
    given([...issued, ...rotated]).when(byOperator(t0 + 20)).then((events) => {
      expect(events).toEqual([
        { type: 'TokenRevoked', v: 1, familyId: 'fam', accountId: 'acc', generation: 1, revokedAt: t0 + 20, accessExpiresAt: t0 + 10 + 3600, rejectsUntil: t0 + 10 + 3600 },
      ]);
    });
  });

  it('changes nothing on a family already revoked, whoever revoked it', () => {
    given([...issued, ...revokedAfterIssue]).when(byOperator(t0 + 20)).then((events) => expect(events).toEqual([]));
  });

  it('refuses an unknown family as not found', () => {
    given([]).when(byOperator(t0)).thenThrows('ERR_FAMILY_NOT_FOUND');
  });

  it('after it, the refresh token is refused as revoked', () => {
    const revoked = decideFamily(byOperator(t0 + 20), issued.reduce(evolveFamily, initialFamilyState()));
    given([...issued, ...revoked]).when(rotate(hash('a'), t0 + 30)).thenThrows('ERR_REFRESH_TOKEN_REVOKED');
  });
});

describe('an OAuth 2.0 family: requested scope and its client', () => {
  type Rotate = Extract<FamilyCommand, { type: 'RotateToken' }>;
  const rotating = (presented: string, changes: Partial<Rotate> = {}): Rotate => ({
    type: 'RotateToken',
    presentedRefreshToken: () => presented,
    newRefreshTokenHash: hash('b'),
    hashingKey: 'K'.repeat(22),
    jti: 'jti-b',
    scope: ['transaction:charge'],
    now: t0 + 10,
    lifetimes,
    refreshReuse: 'keep',
    ...changes,
  });
  const revoking = (presented: string, clientId: string): FamilyCommand => ({ type: 'RevokeToken', presentedRefreshToken: () => presented, clientId, now: t0 + 10 });
  const issued = decideFamily({ ...issue, scope: ['transaction:refund'], requestedScope: ['transaction:refund'] }, initialFamilyState());

  it('records the requested scope on TokenIssued and keeps it on every rotation', () => {
    expect(issued[0]).toMatchObject({ type: 'TokenIssued', scope: ['transaction:refund'], requestedScope: ['transaction:refund'] });
    given(issued)
      .when(rotating(hash('a'), { scope: ['transaction:refund'] }))
      .then((events) => expect(events[0]).toMatchObject({ type: 'TokenRotated', requestedScope: ['transaction:refund'] }));
  });

  it('a v5 family has no requested scope', () => {
    const [event] = decideFamily(issue, initialFamilyState());
    expect(event).not.toHaveProperty('requestedScope');
  });

  it('a refresh may narrow the access token within the scope it is allowed, never widen it', () => {
    const family = decideFamily(issue, initialFamilyState());
    given(family)
      .when(rotating(hash('a'), { scope: ['transaction:charge', 'transaction:refund'], askedScope: ['transaction:refund'] }))
      .then((events) => expect(events[0]).toMatchObject({ scope: ['transaction:refund'] }));
    given(family).when(rotating(hash('a'), { askedScope: ['transaction:refund'] })).thenThrows('ERR_INVALID_SCOPE');
  });

  it('records the resource as the family\'s audience, keeps it through rotations, and refuses another on a refresh', () => {
    const family = decideFamily({ ...issue, audience: 'https://payments.example.test' }, initialFamilyState());
    expect(family[0]).toMatchObject({ type: 'TokenIssued', audience: 'https://payments.example.test' });
    given(family)
      .when(rotating(hash('a')))
      .then((events) => expect(events[0]).toMatchObject({ type: 'TokenRotated', audience: 'https://payments.example.test' }));
    given(family).when(rotating(hash('a'), { askedAudience: 'https://payments.example.test' })).then((events) => expect(events[0]?.type).toBe('TokenRotated'));
    given(family).when(rotating(hash('a'), { askedAudience: 'https://elsewhere.example.test' })).thenThrows('ERR_INVALID_TARGET');
    // A family made without a resource has the default audience: asking for it is no change.
    given(decideFamily(issue, initialFamilyState())).when(rotating(hash('a'), { askedAudience: 'tessera:v5' })).then((events) => expect(events[0]).not.toHaveProperty('audience'));
  });

  it('another client is refused only once the token is proven current: a wrong token stays a wrong token', () => {
    const family = decideFamily(issue, initialFamilyState());
    given(family).when(rotating(hash('a'), { clientId: 'someone-else' })).thenThrows('ERR_REFRESH_TOKEN_OTHER_CLIENT');
    given(family).when(rotating(hash('z'), { clientId: 'someone-else' })).thenThrows('ERR_REFRESH_TOKEN_USED');
    given(family).when(rotating(hash('a'), { clientId: 'login' })).then((events) => expect(events[0]?.type).toBe('TokenRotated'));
    given(family).when(revoking(hash('a'), 'someone-else')).thenThrows('ERR_REFRESH_TOKEN_OTHER_CLIENT');
    given(family).when({ type: 'RevokeFamily', clientId: 'someone-else', now: t0 + 10 }).thenThrows('ERR_REFRESH_TOKEN_OTHER_CLIENT');
    given(family)
      .when({ type: 'RevokeFamily', clientId: 'login', now: t0 + 10 })
      .then((events) => expect(events[0]?.type).toBe('TokenRevoked'));
  });
});
