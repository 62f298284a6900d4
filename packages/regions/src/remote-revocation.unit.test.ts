import { describe, expect, it } from 'vitest';
import { streams, type FamilyEvent, type TokenIssued } from '@tessera/events';
import { DomainError, FamilyCheckMaterial } from '@tessera/domain';
import { InMemoryEventStore } from '@tessera/event-store';
import { IssuerRefusal } from '@tessera/issuer';
import { createSecretHasher, familyOfRefreshToken, newFamilyId, newRefreshToken, singleKeyHashers } from '@tessera/tokens';
import { createRemoteRevocation } from './remote-revocation.js';

const t0 = 1_800_000_000;
const hasher = createSecretHasher(Buffer.alloc(32, 3));
const metadata = { requestId: 'r1', sourceAddress: '192.0.2.7' };

/** Region b revoking an a-homed family from the material a's family topic brought it. */
function regionB() {
  const store = new InMemoryEventStore();
  const material = new FamilyCheckMaterial();
  const applied: FamilyEvent[] = [];
  const remote = createRemoteRevocation({ store, material, hashers: singleKeyHashers(hasher), now: () => t0 + 10, onFamilyEvent: (event) => applied.push(event) });
  const issuedInA = (): { refreshToken: string; event: TokenIssued } => {
    const familyId = newFamilyId('a');
    const refreshToken = newRefreshToken(familyId);
    const event: TokenIssued = {
      type: 'TokenIssued', v: 1, familyId, accountId: 'acc', credentialId: 'c', apiLoginId: 'l', generation: 0,
      refreshTokenHash: hasher.hash(refreshToken), hashingKey: hasher.fingerprint, jti: 'j', scope: [], issuedAt: t0, accessExpiresAt: t0 + 3600, refreshExpiresAt: t0 + 86_400,
    };
    return { refreshToken, event };
  };
  return { store, material, applied, remote, issuedInA };
}
const failureOf = (promise: Promise<unknown>) => promise.then(() => 'no error', (error: unknown) => (error instanceof IssuerRefusal || error instanceof DomainError ? error.code : String(error)));

describe('a revoke recorded away from home', () => {
  it('appends TokenRevoked to revocations-<familyId> with the request metadata, applies it here before answering, and refuses a second one as the home region would', async () => {
    const { store, material, applied, remote, issuedInA } = regionB();
    const { refreshToken, event } = issuedInA();
    material.apply(event);
    expect(await remote.revoke(refreshToken, metadata)).toEqual({ revokedAt: t0 + 10 });
    const familyId = familyOfRefreshToken(refreshToken)!;
    const [recorded, ...more] = await store.readStream(streams.revocations(familyId));
    expect(more).toEqual([]);
    expect(recorded!.event).toMatchObject({ type: 'TokenRevoked', familyId, generation: 0, revokedAt: t0 + 10, rejectsUntil: t0 + 3600 });
    expect(recorded!.metadata).toMatchObject({ ...metadata, accountId: 'acc' });
    expect(await store.readStream(streams.family(familyId))).toEqual([]);
    expect(applied).toEqual([recorded!.event]);
    expect(await failureOf(remote.revoke(refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_REVOKED');
    expect(remote.outcomes()).toEqual({ recorded: 1, unproven: 0, refused: 1 });
  });

  it('records nothing for a token it cannot prove: an unknown family, or a secret the family never issued', async () => {
    const { store, material, remote, issuedInA } = regionB();
    const unknown = issuedInA();
    expect(await failureOf(remote.revoke(unknown.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_UNPROVEN');
    const known = issuedInA();
    material.apply(known.event);
    const forged = newRefreshToken(known.event.familyId);
    expect(await failureOf(remote.revoke(forged, metadata))).toBe('ERR_REFRESH_TOKEN_UNPROVEN');
    expect(await store.headPosition()).toBeUndefined();
    expect(remote.outcomes()).toEqual({ recorded: 0, unproven: 2, refused: 0 });
  });
});
