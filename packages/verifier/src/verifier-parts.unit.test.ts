import { describe, expect, it } from 'vitest';
import type { TokenRevoked } from '@tessera/contracts';
import { loadConfig } from '@tessera/config';
import { ManualClock, ManualScheduler, createListeners } from '@tessera/host';
import { createVerifierParts } from './verifier-parts.js';

const startMs = 1_700_000_000_000;
const revokedNow = (familyId: string, lifetimeSeconds: number): TokenRevoked => ({
  type: 'TokenRevoked',
  v: 1,
  familyId,
  accountId: 'acc',
  generation: 0,
  revokedAt: startMs / 1000,
  accessExpiresAt: startMs / 1000 + lifetimeSeconds,
});

describe('the verifier parts', () => {
  it('forget the revocations whose tokens have all expired on the scheduled sweep, not before', async () => {
    const clock = new ManualClock(startMs);
    const scheduler = new ManualScheduler(clock);
    const config = loadConfig({ TESSERA_CLOCK_SKEW: '0', TESSERA_LOG_LEVEL: 'silent' }, { role: 'verifier' });
    // A verifier's host as far as the parts read it (its role and listeners name the issuers it accepts).
    const host = { config, clock, scheduler, role: 'verifier' as const, listeners: createListeners() };
    const parts = createVerifierParts(host);
    parts.state.projection.apply(revokedNow('short', 3));
    parts.state.projection.apply(revokedNow('long', 3_600));
    expect(parts.entries()).toBe(2);

    // Past the short one's expiry, but before the sweep (every 5 s): still there.
    await scheduler.advance(4_999);
    expect(parts.entries()).toBe(2);
    await scheduler.advance(1);
    expect(parts.entries()).toBe(1);
    expect(parts.state.projection.isRejected('short', 0)).toBe(false);
    expect(parts.state.projection.isRejected('long', 0)).toBe(true);

    // Once stopped, no sweep runs, however long it has been.
    parts.stopForgetting();
    await scheduler.advance(3_600_000);
    expect(parts.entries()).toBe(1);
    expect(scheduler.pending).toBe(0);
  });
});
