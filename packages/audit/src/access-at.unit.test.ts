import { describe, expect, it } from 'vitest';
import type { TesseraEvent } from '@tessera/events';
import { accessAt, accessEventOf, grantOf, type AccessEvent } from './access-at.js';

const hash = 'h'.repeat(43);
const issued = (familyId: string, issuedAt: number, ttl = 3600, credentialId = 'cred-a'): AccessEvent => ({
  kind: 'generation-issued',
  familyId,
  generation: 0,
  credentialId,
  issuedAt,
  expiresAt: issuedAt + ttl,
});
const rotated = (familyId: string, generation: number, issuedAt: number, ttl = 3600, credentialId = 'cred-a'): AccessEvent => ({
  kind: 'generation-issued',
  familyId,
  generation,
  credentialId,
  issuedAt,
  expiresAt: issuedAt + ttl,
});
const revoked = (familyId: string, revokedAt: number): AccessEvent => ({ kind: 'family-revoked', familyId, revokedAt });
const legacy = (jti: string, issuedAt: number, ttl = 1800, credentialId = 'cred-v1'): AccessEvent => ({
  kind: 'legacy-token-issued',
  jti,
  credentialId,
  issuedAt,
  expiresAt: issuedAt + ttl,
});
const familiesAt = (events: AccessEvent[], at: number) => accessAt(events, at).families.map((f) => `${f.familyId}#${f.generation}`);

describe('accessAt: one family', () => {
  const history = [issued('F', 1000), rotated('F', 1, 1600), rotated('F', 2, 2200), revoked('F', 2500)];

  it.each([
    [999, []],
    [1000, ['F#0']],
    [1599, ['F#0']],
    [1600, ['F#1']],
    [2200, ['F#2']],
    [2499, ['F#2']],
    [2500, []],
    [9999, []],
  ])('at %i the usable generation is %j (issued at 1000, refreshed at 1600 and 2200, revoked at 2500)', (at, expected) => {
    expect(familiesAt(history, at)).toEqual(expected);
  });

  it('a token expires at its exp: usable the second before, not at it', () => {
    const events = [issued('F', 1000, 600)];
    expect(familiesAt(events, 1599)).toEqual(['F#0']);
    expect(familiesAt(events, 1600)).toEqual([]);
  });

  it('the answer names the usable generation, when it was issued and expires, and its credential', () => {
    expect(accessAt([issued('F', 1000, 3600, 'cred-x'), rotated('F', 1, 1600, 900, 'cred-x')], 1700).families).toEqual([
      { familyId: 'F', generation: 1, credentialId: 'cred-x', issuedAt: 1600, expiresAt: 2500 },
    ]);
  });

  it('a rotation that arrives again (a replay, a duplicate) does not bring an older generation back', () => {
    expect(familiesAt([issued('F', 1000), rotated('F', 2, 1200), rotated('F', 1, 1100)], 1300)).toEqual(['F#2']);
  });
});

describe('accessAt: several families and v1 tokens', () => {
  it('lists every family with a usable token, oldest first, and leaves out the expired and the revoked', () => {
    const events = [issued('A', 100, 600), issued('B', 200), issued('C', 300), revoked('C', 400), issued('D', 500)];
    expect(familiesAt(events, 450)).toEqual(['A#0', 'B#0']);
    expect(familiesAt(events, 700)).toEqual(['B#0', 'D#0']);
  });

  it('v1 tokens are usable from issue to expiry and are listed apart', () => {
    const events = [legacy('j1', 100), issued('F', 150), legacy('j2', 200, 60)];
    expect(accessAt(events, 250)).toEqual({
      families: [{ familyId: 'F', generation: 0, credentialId: 'cred-a', issuedAt: 150, expiresAt: 3750 }],
      legacyTokens: [
        { jti: 'j1', credentialId: 'cred-v1', issuedAt: 100, expiresAt: 1900 },
        { jti: 'j2', credentialId: 'cred-v1', issuedAt: 200, expiresAt: 260 },
      ],
    });
    expect(accessAt(events, 260).legacyTokens.map((t) => t.jti)).toEqual(['j1']);
  });
});

describe('accessAt: cuts', () => {
  const history = [issued('A', 100, 3600, 'cred-1'), issued('B', 200, 3600, 'cred-2'), legacy('j', 150, 1800, 'cred-v1')];

  it('an account-wide cut kills every token issued before its not-before, from its own time on', () => {
    const events = [...history, { kind: 'tokens-cut', notBefore: 300, at: 300 } as const, issued('C', 300)];
    expect(familiesAt(events, 299)).toEqual(['A#0', 'B#0']);
    expect(accessAt(events, 299).legacyTokens).toHaveLength(1);
    expect(familiesAt(events, 300)).toEqual(['C#0']);
    expect(accessAt(events, 300).legacyTokens).toEqual([]);
  });

  it('a credential cut kills only that credential\'s tokens', () => {
    const events = [...history, { kind: 'tokens-cut', credentialId: 'cred-1', notBefore: 300, at: 300 } as const];
    expect(familiesAt(events, 400)).toEqual(['B#0']);
    expect(accessAt(events, 400).legacyTokens).toHaveLength(1);
  });
});

describe('accessEventOf', () => {
  const family = { familyId: 'F', accountId: 'acct', credentialId: 'cred', apiLoginId: 'login', refreshTokenHash: hash, jti: 'j', scope: [], issuedAt: 10, accessExpiresAt: 20, refreshExpiresAt: 30 };

  it('maps issue, rotation, revocation and v1 issue, and the grant each belongs to', () => {
    const events: TesseraEvent[] = [
      { type: 'TokenIssued', v: 1, ...family, generation: 0 },
      { type: 'TokenRotated', v: 1, ...family, generation: 3 },
      { type: 'TokenRevoked', v: 1, familyId: 'F', accountId: 'acct', generation: 3, revokedAt: 15, accessExpiresAt: 20 },
      { type: 'LegacyTokenIssued', v: 1, accountId: 'acct', credentialId: 'cred1', apiId: 'api', jti: 'lj', issuedAt: 10, expiresAt: 40 },
    ];
    const mapped = events.map(accessEventOf);
    expect(mapped).toEqual([
      { kind: 'generation-issued', familyId: 'F', generation: 0, credentialId: 'cred', issuedAt: 10, expiresAt: 20 },
      { kind: 'generation-issued', familyId: 'F', generation: 3, credentialId: 'cred', issuedAt: 10, expiresAt: 20 },
      { kind: 'family-revoked', familyId: 'F', revokedAt: 15 },
      { kind: 'legacy-token-issued', jti: 'lj', credentialId: 'cred1', issuedAt: 10, expiresAt: 40 },
    ]);
    expect(mapped.map((event) => grantOf(event!))).toEqual([
      { kind: 'family', familyId: 'F', span: { from: 10, until: 20 } },
      { kind: 'family', familyId: 'F', span: { from: 10, until: 20 } },
      { kind: 'family', familyId: 'F' },
      { kind: 'single', span: { from: 10, until: 40 } },
    ]);
  });

  it('account and key events say nothing about issued tokens; an event type it does not know is ignored', () => {
    expect(accessEventOf({ type: 'PermissionsChanged', v: 1, accountId: 'a', permissions: [], at: 1 })).toBeUndefined();
    // A newer writer's event, as the log can hand it to an older reader.
    expect(accessEventOf({ type: 'SomethingNew', v: 1 } as unknown as TesseraEvent)).toBeUndefined();
  });
});
