import { accountEventTypes, signingKeyEventTypes, tokenCutEventTypes, type FamilyEvent, type TokenCutEvent } from '@tessera/contracts';
import { CredentialDirectory } from '@tessera/domain';
import { logReader, type LogReader } from '@tessera/event-store';
import { PublicKeySet } from '@tessera/tokens';
import { RevocationProjection } from '@tessera/verification';

/**
 * What a verifier knows, all in memory and all rebuilt from the log: the public keys, the
 * revocation projection, and account profiles for the example routes.
 */
export function createVerifierState(options: { clockSkewSeconds: number }) {
  const keys = new PublicKeySet();
  const projection = new RevocationProjection({ clockSkewSeconds: options.clockSkewSeconds });
  const accounts = new CredentialDirectory();
  /**
   * Keys and accounts need the whole history. So do cuts, which are account events: read with them,
   * no rebuild window has to argue where they lie (the projection stores only those still live).
   */
  const readers: LogReader[] = [
    logReader(signingKeyEventTypes, ({ event }) => keys.apply(event)),
    logReader(accountEventTypes, ({ event }) => accounts.apply(event)),
    logReader(tokenCutEventTypes, ({ event }) => projection.apply(event)),
  ];
  /** Rotations and revocations matter for one token lifetime only: followed from that far back (decision 0008). */
  const revocationReader = logReader(['TokenRotated', 'TokenRevoked'], ({ event }) => applyFamilyEvent(event));
  function applyFamilyEvent(event: FamilyEvent): void {
    if (event.type !== 'TokenIssued') projection.apply(event);
  }
  /**
   * A cut this process appended, applied before its answer is sent (read-your-writes, as
   * applyFamilyEvent); the log brings it again, which changes nothing.
   */
  function applyCut(event: TokenCutEvent): void {
    projection.apply(event);
    accounts.apply(event);
  }
  return { keys, projection, accounts, readers, revocationReader, applyFamilyEvent, applyCut };
}

export type VerifierState = ReturnType<typeof createVerifierState>;
