import { ssfReceiverEventTypes, type SsfReceiverEvent } from '@tessera/contracts';
import { sameKeyedHash } from '@tessera/domain';
import { logReader, type LogReader } from '@tessera/event-store';
import type { SecretHasher } from '@tessera/tokens';

export interface AuthenticatedReceiver {
  readonly receiverId: string;
  readonly name: string;
}

/**
 * The active receivers by the keyed hash of their token, followed from the log as admin tokens
 * are: a receiver made by the CLI is accepted within a poll of the log, a revoked one refused as
 * soon as its revocation is read.
 */
export class ReceiverDirectory {
  private readonly byHash = new Map<string, { readonly tokenHash: string; readonly receiver: AuthenticatedReceiver }>();
  private readonly hashById = new Map<string, string>();
  private readonly revoked = new Set<string>();

  constructor(private readonly hasher: SecretHasher) {}

  get reader(): LogReader {
    return logReader(ssfReceiverEventTypes, ({ event }) => this.apply(event));
  }

  apply(event: SsfReceiverEvent): void {
    if (event.type === 'SsfReceiverRegistered') {
      if (this.revoked.has(event.receiverId)) return;
      this.byHash.set(event.tokenHash, { tokenHash: event.tokenHash, receiver: { receiverId: event.receiverId, name: event.name } });
      this.hashById.set(event.receiverId, event.tokenHash);
      return;
    }
    this.revoked.add(event.receiverId);
    const hash = this.hashById.get(event.receiverId);
    if (hash !== undefined) this.byHash.delete(hash);
    this.hashById.delete(event.receiverId);
  }

  /** Looked up by keyed hash, then compared in constant time: never a byte-by-byte comparison of secrets. */
  authenticate(presented: string): AuthenticatedReceiver | undefined {
    const presentedHash = this.hasher.hash(presented);
    const found = this.byHash.get(presentedHash);
    if (found === undefined || !sameKeyedHash(found.tokenHash, presentedHash)) return undefined;
    return found.receiver;
  }

  isActive(receiverId: string): boolean {
    return this.hashById.has(receiverId);
  }
}
