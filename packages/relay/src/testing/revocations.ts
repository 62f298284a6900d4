// Test support for the relay's unit tests: src/testing is left out of the build.
import { streams, type TokenRevoked } from '@tessera/events';
import type { EventStore } from '@tessera/event-store';
import { epochSeconds, systemClock } from '@tessera/timing';

const now = epochSeconds(systemClock);

/** Appends one revocation of `familyId` to the log, the event the relay carries first of all. */
export async function appendRevocation(store: EventStore, familyId: string): Promise<void> {
  const event: TokenRevoked = { type: 'TokenRevoked', v: 1, familyId, accountId: 'acc', generation: 0, revokedAt: now, accessExpiresAt: now + 3600, rejectsUntil: now + 3600 };
  await store.append(streams.family(familyId), [{ event }], { expectedRevision: 'any' });
}
