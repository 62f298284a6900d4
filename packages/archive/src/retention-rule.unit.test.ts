import { describe, expect, it } from 'vitest';
import { closedAt, mattersUntil, removableEvents, retentionOf, type RetainedEvent, type RetentionSettings } from './retention-rule.js';

const settings: RetentionSettings = { hotWindowSeconds: 14 * 86_400, clockSkewSeconds: 60 };
const day = 86_400;
/** Now, in epoch seconds; the rule takes milliseconds. */
const now = 1_900_000_000;
const nowMs = now * 1000;
/** The first second the hot window holds. */
const windowStart = now - settings.hotWindowSeconds;

/** An event recorded at `recordedAt` (epoch seconds) with payload `event`, at revision `revision` of its stream. */
const retained = (revision: number, recordedAt: number, event: Record<string, unknown>): RetainedEvent => ({ position: BigInt(100 + revision), revision: BigInt(revision), recordedAt: recordedAt * 1000, event });
const issued = (revision: number, recordedAt: number, accessExpiresAt: number, refreshExpiresAt: number) => retained(revision, recordedAt, { type: 'TokenIssued', accessExpiresAt, refreshExpiresAt });
const removed = (stream: string, events: readonly RetainedEvent[]) => removableEvents(stream, events, nowMs, settings).map((event) => Number(event.revision));

describe('which streams retention applies to', () => {
  it('closes token families and revocations of other regions\' families; rolls v1 tokens, failure counts and mirrored revocations', () => {
    expect(['tokenfamily-f1', 'revocations-us1_f1'].map(retentionOf)).toEqual(['closing', 'closing']);
    expect(['legacytokens-a1', 'authfailures-a1', 'mirroredrevocations-us1', 'ssfverifications-s1', 'ssfdelivery'].map(retentionOf)).toEqual(['rolling', 'rolling', 'rolling', 'rolling', 'rolling']);
  });

  it('keeps for good accounts, signing keys, admin tokens, the secret-hashing key, the archive\'s anchors, and any kind it does not name', () => {
    const kept = ['account-a1', 'signingkeys', 'admintoken-t1', 'secrethashingkey', 'archivetrust', 'controlregion', 'ssfreceiver-r1', 'somethingnew-1'];
    expect(kept.map(retentionOf)).toEqual(kept.map(() => 'kept'));
    for (const stream of kept) expect(removableEvents(stream, [retained(0, windowStart - 365 * day, {})], nowMs, settings)).toEqual([]);
  });
});

describe('a snapshotted stream (a Shared Signals stream)', () => {
  const old = windowStart - 30 * day;
  const churn = (from: number, to: number, at: number) => Array.from({ length: to - from }, (_, index) => retained(from + index, at, { type: index % 2 === 0 ? 'SsfSubjectAdded' : 'SsfSubjectRemoved' }));

  it('is one', () => {
    expect(retentionOf('ssfstream-s1')).toBe('snapshotted');
  });

  it('lets go of the events before its newest snapshot once they are older than the hot window, keeping the snapshot and what follows', () => {
    const events = [retained(0, old, { type: 'SsfStreamCreated' }), ...churn(1, 100, old), retained(100, old, { type: 'SsfStreamSnapshotted' }), ...churn(101, 200, old), retained(200, old, { type: 'SsfStreamSnapshotted' }), ...churn(201, 230, old)];
    expect(removed('ssfstream-s1', events)).toEqual(Array.from({ length: 200 }, (_, revision) => revision));
  });

  it('keeps what is within the hot window, and everything of a stream with no snapshot yet', () => {
    const recent = now - day;
    expect(removed('ssfstream-s1', [retained(0, old, { type: 'SsfStreamCreated' }), ...churn(1, 50, recent), retained(50, recent, { type: 'SsfStreamSnapshotted' })])).toEqual([0]);
    expect(removed('ssfstream-s1', [retained(0, old, { type: 'SsfStreamCreated' }), ...churn(1, 99, old)])).toEqual([]);
  });
});

describe('mattersUntil', () => {
  it('is the latest of the expiries and rejection times an event carries', () => {
    expect(mattersUntil({ accessExpiresAt: 10, refreshExpiresAt: 30, rejectsUntil: 20 })).toBe(30);
    expect(mattersUntil({ expiresAt: 40 })).toBe(40);
    expect(mattersUntil({ revokedAt: 5, accessExpiresAt: 10, rejectsUntil: 50 })).toBe(50);
  });

  it('is undefined for an event that carries none, and reads only finite numbers', () => {
    expect(mattersUntil({ type: 'AccountRegistered', at: 5 })).toBeUndefined();
    expect(mattersUntil({ expiresAt: '40', accessExpiresAt: Number.POSITIVE_INFINITY, rejectsUntil: Number.NaN })).toBeUndefined();
  });
});

describe('closedAt', () => {
  it('is the latest time any event of the stream matters until, plus skew', () => {
    expect(closedAt([issued(0, now, now + 3600, now + 7 * day)], settings)).toBe(now + 7 * day + 60);
  });

  it('looks at every event: a rotation that rejects an earlier, longer-lived token keeps the family open until that token expires', () => {
    const family = [issued(0, now, now + 3600, now + 30 * day), retained(1, now + 60, { type: 'TokenRotated', accessExpiresAt: now + 3660, refreshExpiresAt: now + 60 + day, rejectsUntil: now + 3600 })];
    expect(closedAt(family, settings)).toBe(now + 30 * day + 60);
  });

  it('is undefined for a stream that names no expiry at all', () => {
    expect(closedAt([retained(0, now, { type: 'Unknown' })], settings)).toBeUndefined();
    expect(closedAt([], settings)).toBeUndefined();
  });
});

describe('a closing stream', () => {
  const closedLongAgo = (lastRecordedAt: number) => [issued(0, lastRecordedAt - day, lastRecordedAt, lastRecordedAt), retained(1, lastRecordedAt, { type: 'TokenRevoked', accessExpiresAt: lastRecordedAt })];

  it('leaves whole once closed and its last event is older than the hot window', () => {
    expect(removableEvents('tokenfamily-f1', closedLongAgo(windowStart - 1), nowMs, settings)).toEqual(closedLongAgo(windowStart - 1));
  });

  it('stays while its last event is in the hot window, closed or not: recorded exactly at the window\'s start is inside it', () => {
    expect(removed('tokenfamily-f1', closedLongAgo(windowStart))).toEqual([]);
    expect(removed('revocations-us1_f1', closedLongAgo(windowStart + day))).toEqual([]);
  });

  it('stays while a token it issued can still be valid, plus skew; the second it is closed, it may go', () => {
    const recordedAt = windowStart - 30 * day;
    const stillValid = [issued(0, recordedAt, now - 3600, now - 60 + 1)];
    expect(removed('tokenfamily-f1', stillValid)).toEqual([]);
    const closingNow = [issued(0, recordedAt, now - 3600, now - 60)];
    expect(removed('tokenfamily-f1', closingNow)).toEqual([0]);
  });

  it('stays when it names no expiry at all: not one this rule knows how to close', () => {
    expect(removed('tokenfamily-f1', [retained(0, windowStart - 365 * day, { type: 'TokenIssued' })])).toEqual([]);
  });
});

describe('a rolling stream', () => {
  const old = windowStart - 30 * day;
  const legacy = (revision: number, recordedAt: number, expiresAt: number) => retained(revision, recordedAt, { type: 'LegacyTokenIssued', expiresAt });

  it('loses its dead events older than the hot window, but never its newest, so its revisions go on from it', () => {
    expect(removed('legacytokens-a1', [legacy(0, old, old + 1800), legacy(1, old + 60, old + 1860), legacy(2, old + 120, old + 1920)])).toEqual([0, 1]);
  });

  it('keeps the newest by revision, whatever order the events come in', () => {
    expect(removed('legacytokens-a1', [legacy(2, old + 120, old + 1920), legacy(0, old, old + 1800), legacy(1, old + 60, old + 1860)])).toEqual([0, 1]);
  });

  it('keeps an event in the hot window, and one that can still admit or reject something, plus skew', () => {
    const events = [legacy(0, old, now - 60), legacy(1, old, now - 59), legacy(2, windowStart, windowStart + 1800), legacy(3, now, now + 1800)];
    expect(removed('legacytokens-a1', events)).toEqual([0]);
  });

  it('lets an old event that matters until nothing go: a failure count', () => {
    const counts = [retained(0, old, { type: 'AuthenticationFailuresCounted', minute: old }), retained(1, old + 60, { type: 'AuthenticationFailuresCounted', minute: old + 60 })];
    expect(removed('authfailures-a1', counts)).toEqual([0]);
  });

  it("lets a Shared Signals stream's old verification requests go, but its newest", () => {
    const requests = [0, 1, 2].map((revision) => retained(revision, old + revision * 60, { type: 'SsfVerificationRequested', at: old + revision * 60 }));
    expect(removed('ssfverifications-s1', requests)).toEqual([0, 1]);
  });

  it('lets old delivery-lease renewals go, but the newest event of the lease', () => {
    const renewals = [0, 1, 2].map((revision) => retained(revision, old + revision * 10, { type: 'SsfDeliveryLeaseRenewed', replica: 'r1', epoch: 1, at: old + revision * 10 }));
    expect(removed('ssfdelivery', renewals)).toEqual([0, 1]);
  });

  it('gives nothing from a stream of one event, or of none', () => {
    expect(removed('mirroredrevocations-us1', [retained(0, old, { type: 'RevocationMirrored' })])).toEqual([]);
    expect(removed('mirroredrevocations-us1', [])).toEqual([]);
  });
});
