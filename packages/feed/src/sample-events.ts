import { randomUUID } from 'node:crypto';
import type { PublishedEvent, RecordedEvent, SigningKeyPublished, TokenRevoked, TokenRotated } from '@tessera/contracts';
import { systemClock } from '@tessera/timing';

/**
 * Valid events for feed tests and the shipped contract suite (not in testing/, which the build
 * leaves out). Hashes are fixed placeholders: the feed never looks at them.
 */
const placeholderHash = 'A'.repeat(43);

export function tokenRotated(familyId: string, generation: number, at: number): TokenRotated {
  return {
    type: 'TokenRotated',
    v: 1,
    familyId,
    accountId: `acct-${familyId}`,
    credentialId: 'cred-1',
    apiLoginId: 'login-1',
    generation,
    refreshTokenHash: placeholderHash,
    jti: randomUUID(),
    scope: ['transaction:charge'],
    issuedAt: at,
    accessExpiresAt: at + 3600,
    refreshExpiresAt: at + 7 * 86_400,
  };
}

export function tokenRevoked(familyId: string, generation: number, at: number): TokenRevoked {
  return { type: 'TokenRevoked', v: 1, familyId, accountId: `acct-${familyId}`, generation, revokedAt: at, accessExpiresAt: at + 3600 };
}

export function signingKeyPublished(kid: string, at: number): SigningKeyPublished {
  return { type: 'SigningKeyPublished', v: 1, kid, alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', x: 'x'.repeat(43), y: 'y'.repeat(43) }, at };
}

/** The stream a log would record the event in, named as Tessera's log names it (the feed only carries it). */
function streamOf(event: PublishedEvent): string {
  if ('familyId' in event) return `tokenfamily-${event.familyId}`;
  if ('kid' in event) return 'signingkeys';
  if (event.type === 'ControlRegionChanged') return 'controlregion';
  return `account-${event.accountId}`;
}

/** Hands out increasing positions, as a log would. */
export function createRecorder(firstPosition = 1n) {
  let position = firstPosition;
  const revisions = new Map<string, bigint>();
  return (event: PublishedEvent, recordedAt = systemClock.now()): RecordedEvent => {
    const stream = streamOf(event);
    const revision = (revisions.get(stream) ?? -1n) + 1n;
    revisions.set(stream, revision);
    const recorded: RecordedEvent = {
      eventId: randomUUID(),
      stream,
      revision,
      position,
      event,
      metadata: { requestId: `req-${position}` },
      recordedAt,
    };
    position += 1n;
    return recorded;
  };
}
