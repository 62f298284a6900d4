import { randomUUID } from 'node:crypto';
import type { RecordedEvent, SigningKeyPublished, TesseraEvent, TokenRevoked, TokenRotated } from '@tessera/contracts';
import { ssfStreams, streams } from '@tessera/contracts';
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

function streamOf(event: TesseraEvent): string {
  if ('familyId' in event) return streams.family(event.familyId);
  if ('kid' in event) return streams.signingKeys();
  if ('adminTokenId' in event) return streams.adminToken(event.adminTokenId);
  if (event.type === 'ArchiveKeyTrusted' || event.type === 'ArchiveHeadRecorded') return streams.archiveTrust();
  if ('fingerprint' in event) return streams.secretHashingKey();
  if (event.type === 'AuthenticationFailuresCounted') return streams.authenticationFailures(event.accountId);
  if ('streamId' in event) return ssfStreams.stream(event.streamId);
  if ('receiverId' in event) return ssfStreams.receiver(event.receiverId);
  if (event.type === 'ControlRegionChanged') return streams.controlRegion();
  if (event.type === 'RevocationMirrored') return streams.mirroredRevocations(event.region);
  return streams.account(event.accountId);
}

/** Hands out increasing positions, as a log would. */
export function createRecorder(firstPosition = 1n) {
  let position = firstPosition;
  const revisions = new Map<string, bigint>();
  return (event: TesseraEvent, recordedAt = systemClock.now()): RecordedEvent => {
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
