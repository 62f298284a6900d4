import { streams, type EventMetadata, type FamilyEvent } from '@tessera/events';
import { DomainError, familyDecider, type FamilyCommand } from '@tessera/domain';
import { handleCommand, type CommandStore } from '@tessera/event-store';

export interface FamilyRevocationDeps {
  readonly store: CommandStore;
  /** Epoch seconds. */
  readonly now: () => number;
  /** Called with each family event once durable: the verifier in this process refuses the token at once. */
  readonly onFamilyEvent?: ((event: FamilyEvent) => void) | undefined;
}

export interface RevokedFamily {
  readonly familyId: string;
  readonly accountId: string;
  /** Revoked before this call: nothing was appended. */
  readonly alreadyRevoked: boolean;
}

/** Families revoked side by side: enough to keep SQLite's group commit busy, few enough not to crowd out token requests. */
const parallelRevocations = 8;

/**
 * One family revoked without its refresh token, through the command handler: what an operator's
 * revocation and an account's disable both do. `metadataOf` names who asked, for the audit trail.
 * Throws ERR_FAMILY_NOT_FOUND for a family never issued.
 */
export async function revokeFamilyAs(deps: FamilyRevocationDeps, familyId: string, metadataOf: (accountId: string) => EventMetadata): Promise<RevokedFamily> {
  const { events, state } = await handleCommand(deps.store, {
    stream: streams.family(familyId),
    decider: familyDecider,
    command: (state): FamilyCommand => {
      if (state.status === 'none') throw new DomainError('ERR_FAMILY_NOT_FOUND', `no token family ${familyId}`);
      return { type: 'RevokeFamily', now: deps.now() };
    },
    // Family events are fat: the last one is the state.
    read: 'last-event',
    metadata: (event) => metadataOf(event.accountId),
    // A refresh that commits meanwhile: revoke its newer generation instead.
    onConflict: { retries: 3 },
  });
  for (const event of events) deps.onFamilyEvent?.(event);
  // RevokeFamily refuses a family that does not exist, so the state has an account here.
  const accountId = state.status === 'none' ? '' : state.accountId;
  return { familyId, accountId, alreadyRevoked: events.length === 0 };
}

/** Every family named revoked, a few at a time; answers how many this call revoked (not those revoked already). */
export async function revokeFamiliesAs(deps: FamilyRevocationDeps, familyIds: readonly string[], metadataOf: (accountId: string) => EventMetadata): Promise<number> {
  const pending = [...familyIds];
  let revoked = 0;
  const worker = async () => {
    for (let familyId = pending.pop(); familyId !== undefined; familyId = pending.pop()) {
      if (!(await revokeFamilyAs(deps, familyId, metadataOf)).alreadyRevoked) revoked += 1;
    }
  };
  await Promise.all(Array.from({ length: parallelRevocations }, worker));
  return revoked;
}
