import { describe, expect, it } from 'vitest';
import type { SigningKeyEvent } from '@tessera/contracts';
import { createInProcessFeed } from '@tessera/feed';
import { createRecorder, signingKeyPublished, tokenRevoked, tokenRotated } from '@tessera/feed/testing';
import { startRevocationConsumer } from './revocation-consumer.js';
import { ManualClock, ManualScheduler, systemClock } from '@tessera/timing';

const seconds = (ms: number) => Math.floor(ms / 1000);

describe('revocation consumer (in-process feed)', () => {
  it('rejects revoked and rotated-away generations, and ignores redeliveries', async () => {
    const feed = createInProcessFeed();
    const record = createRecorder();
    const now = systemClock.now();
    const rotated = record(tokenRotated('fam-a', 2, seconds(now)));
    const revoked = record(tokenRevoked('fam-b', 0, seconds(now)));
    await feed.publish([rotated, revoked]);
    // A relay that crashed before its checkpoint publishes the same events again.
    await feed.publish([rotated, revoked]);
    const consumer = await startRevocationConsumer({ feed });
    await consumer.ready;
    expect(consumer.isRejected('fam-a', 1)).toBe(true);
    expect(consumer.isRejected('fam-a', 2)).toBe(false);
    expect(consumer.isRejected('fam-b', 0)).toBe(true);
    expect(consumer.isRejected('fam-c', 0)).toBe(false);
    expect(consumer.stats()).toMatchObject({ applied: 2, duplicatesIgnored: 2, entries: 2 });
    await consumer.close();
    await feed.close();
  });

  it('leaves out revocations whose tokens have all expired, and hands key events on', async () => {
    const feed = createInProcessFeed();
    const record = createRecorder();
    const now = systemClock.now();
    const longAgo = now - 2 * 3600_000;
    await feed.publish([record(tokenRevoked('fam-old', 0, seconds(longAgo)), longAgo)]);
    await feed.publish([record(signingKeyPublished('kid-1', seconds(now)), now), record(tokenRevoked('fam-new', 4, seconds(now)), now)]);
    const keys: SigningKeyEvent[] = [];
    const consumer = await startRevocationConsumer({ feed, now: () => now, onSigningKeyEvent: (event) => keys.push(event) });
    await consumer.ready;
    expect(consumer.isReady()).toBe(true);
    expect(consumer.isRejected('fam-new', 4)).toBe(true);
    expect(consumer.isRejected('fam-old', 0)).toBe(false);
    expect(keys.map((k) => k.kid)).toEqual(['kid-1']);
    await consumer.close();
    await feed.close();
  });

  it('rebuilds a revocation older than any configured lifetime while the tokens it rejects are unexpired', async () => {
    const feed = createInProcessFeed();
    const record = createRecorder();
    const now = 1_900_000_000_000;
    const threeHoursAgo = now - 3 * 3600_000;
    // Issued under a 4-hour lifetime, revoked three hours ago: still rejecting for an hour.
    const stillMatters = { ...tokenRevoked('fam-long-lived', 0, seconds(threeHoursAgo)), rejectsUntil: seconds(now) + 3600 };
    // A TTL lowered to 5 s at the rotation: the rejected generation 0 outlives the new one.
    const rotatedAway = { ...tokenRotated('fam-rotated', 1, seconds(threeHoursAgo)), accessExpiresAt: seconds(threeHoursAgo) + 5, rejectsUntil: seconds(now) + 60 };
    const expired = { ...tokenRevoked('fam-expired', 0, seconds(threeHoursAgo)), rejectsUntil: seconds(now) - 61 };
    await feed.publish([record(stillMatters, threeHoursAgo), record(rotatedAway, threeHoursAgo), record(expired, threeHoursAgo)]);
    const consumer = await startRevocationConsumer({ feed, now: () => now, accessTokenTtlSeconds: 5, clockSkewSeconds: 60 });
    await consumer.ready;
    expect(consumer.isRejected('fam-long-lived', 0)).toBe(true);
    expect(consumer.isRejected('fam-rotated', 0)).toBe(true);
    expect(consumer.isRejected('fam-expired', 0)).toBe(false);
    expect(consumer.stats()).toMatchObject({ applied: 3, entries: 2 });
    await consumer.close();
    await feed.close();
  });

  it('forgets a revocation once its tokens have expired, on the scheduled sweep', async () => {
    const feed = createInProcessFeed();
    const record = createRecorder();
    const clock = new ManualClock(1_900_000_000_000);
    const scheduler = new ManualScheduler(clock);
    // Revoked now with a one-hour access token: it can reject nothing after an hour and the skew.
    await feed.publish([record(tokenRevoked('fam-now', 0, seconds(clock.now())), clock.now())]);
    const consumer = await startRevocationConsumer({ feed, now: () => clock.now(), clockSkewSeconds: 0, forgetIntervalMs: 420_000, scheduler });
    await consumer.ready;
    expect(consumer.stats().entries).toBe(1);
    // Expired at 3600 s; the sweeps run every 7 minutes, at 3360 s and then 3780 s: held until that one.
    await scheduler.advance(3_779_999);
    expect(consumer.stats().entries).toBe(1);
    await scheduler.advance(1);
    expect(consumer.stats().entries).toBe(0);
    await consumer.close();
    expect(scheduler.pending).toBe(0);
    await feed.close();
  });

  it('rebuilds from the start of the feed even for a group that consumed it before', async () => {
    const feed = createInProcessFeed();
    const record = createRecorder();
    const now = systemClock.now();
    await feed.publish([record(tokenRevoked('fam-seen', 0, seconds(now)), now)]);
    const first = await startRevocationConsumer({ feed, groupId: 'verifier-1', now: () => now });
    await first.ready;
    await first.close();
    const restarted = await startRevocationConsumer({ feed, groupId: 'verifier-1', now: () => now });
    await restarted.ready;
    expect(restarted.isRejected('fam-seen', 0)).toBe(true);
    await restarted.close();
    await feed.close();
  });
});

describe('revocation consumer cuts (in-process feed)', () => {
  it('refuses tokens issued before an account cut or a credential cut, v1 ones included, and forgets a cut whose tokens have all expired', async () => {
    const feed = createInProcessFeed();
    const record = createRecorder();
    const now = 1_800_000_000;
    await feed.publish([
      record({ type: 'AccountTokensRevoked', v: 1, accountId: 'acc', notBefore: now, rejectsUntil: now + 3600, reason: 'operator', at: now - 1 }),
      record({ type: 'CredentialTokensRevoked', v: 1, accountId: 'acc2', credentialId: 'c', apiId: 'tla_old', notBefore: now, rejectsUntil: now + 1800, reason: 'legacy-key-revoked', at: now - 1 }),
      record({ type: 'AccountTokensRevoked', v: 1, accountId: 'stale', notBefore: now - 9000, rejectsUntil: now - 7200, reason: 'operator', at: now - 9001 }),
    ]);
    const consumer = await startRevocationConsumer({ feed, now: () => now * 1000 });
    await consumer.ready;
    expect(consumer.isCutOff({ accountId: 'acc', clientId: 'tsl_a', issuedAt: now - 1 })).toBe(true);
    expect(consumer.isCutOff({ accountId: 'acc', clientId: 'tsl_a', issuedAt: now })).toBe(false);
    expect(consumer.isCutOff({ accountId: 'acc2', clientId: 'tla_old', issuedAt: now - 1 })).toBe(true);
    expect(consumer.isCutOff({ accountId: 'stale', clientId: 'tsl_s', issuedAt: now - 9999 })).toBe(false);
    expect(consumer.stats()).toMatchObject({ applied: 3, entries: 2 });
    await consumer.close();
    await feed.close();
  });
});
