import { streams, type EventMetadata, type FamilyEvent } from '@tessera/events';
import { DomainError, decideRemoteRevocation, type FamilyCheckMaterial } from '@tessera/domain';
import type { EventStore } from '@tessera/event-store';
import { refreshRefusal } from '@tessera/issuer';
import { familyOfRefreshToken, type SecretHashers } from '@tessera/tokens';

export interface RemoteRevocationDeps {
  readonly store: Pick<EventStore, 'append'>;
  /** Other regions' family events, as the mirror brought them here. */
  readonly material: Pick<FamilyCheckMaterial, 'get' | 'apply'>;
  /** Every region hashes with the same keys: a presented token is hashed under the key its family's hash names. */
  readonly hashers: SecretHashers;
  /** Epoch seconds. */
  readonly now: () => number;
  /** Called with the revocation once durable, before the answer: this region refuses the family's tokens at once. */
  readonly onFamilyEvent?: (event: FamilyEvent) => void;
}

export type RemoteRevocationOutcome = 'recorded' | 'unproven' | 'refused';

/**
 * A revoke of a family homed in another region that is out of reach, recorded here (docs/decisions/0018):
 * decided from the check material, appended to `revocations-<familyId>` in this region's log (never
 * to the family's stream, which only its home region writes), applied to this process before the
 * answer, and published by this region's relay like any revocation; the home region folds it into
 * its refresh decisions when it arrives there.
 */
export function createRemoteRevocation(deps: RemoteRevocationDeps) {
  const outcomes: Record<RemoteRevocationOutcome, number> = { recorded: 0, unproven: 0, refused: 0 };
  return {
    /** With `expected.accountId` (the OAuth 2.0 door's client), the family must be that account's, else ERR_REFRESH_TOKEN_OTHER_CLIENT. */
    async revoke(refreshToken: string, metadata: EventMetadata, expected: { readonly accountId?: string | undefined } = {}): Promise<{ revokedAt: number }> {
      const familyId = familyOfRefreshToken(refreshToken);
      if (!familyId) throw refreshRefusal('ERR_REFRESH_TOKEN_INVALID');
      let event;
      try {
        event = decideRemoteRevocation(deps.material.get(familyId), (hashingKey) => deps.hashers.hashUnder(hashingKey, refreshToken), deps.now());
      } catch (error) {
        if (error instanceof DomainError && error.code === 'ERR_REFRESH_TOKEN_UNPROVEN') {
          outcomes.unproven += 1;
          throw error;
        }
        if (error instanceof DomainError && (error.code === 'ERR_REFRESH_TOKEN_REVOKED' || error.code === 'ERR_REFRESH_TOKEN_EXPIRED')) {
          outcomes.refused += 1;
          throw refreshRefusal(error.code);
        }
        throw error;
      }
      // Checked once the token is proven, as at home: a guessed token learns nothing of whose family it names.
      if (expected.accountId !== undefined && event.accountId !== expected.accountId) {
        outcomes.refused += 1;
        throw refreshRefusal('ERR_REFRESH_TOKEN_OTHER_CLIENT');
      }
      // Any revision: a second revocation recorded here changes nothing anyone reads, and must not fail.
      await deps.store.append(streams.revocations(familyId), [{ event, metadata: { ...metadata, accountId: event.accountId } }], { expectedRevision: 'any' });
      deps.material.apply(event);
      deps.onFamilyEvent?.(event);
      outcomes.recorded += 1;
      return { revokedAt: event.revokedAt };
    },
    /** Running totals by outcome, for tessera_remote_revocations_total. */
    outcomes: (): Readonly<Record<RemoteRevocationOutcome, number>> => ({ ...outcomes }),
  };
}

export type RemoteRevocation = ReturnType<typeof createRemoteRevocation>;
