import { ssfReceiverEventTypes, type SsfReceiverEvent } from '@tessera/events';
import { logReader, type LogReader } from '@tessera/event-store';
import { SecretsByHash } from '@tessera/hashing-key';
import type { SecretHashers } from '@tessera/tokens';

export interface AuthenticatedReceiver {
  readonly receiverId: string;
  readonly name: string;
}

/** The accounts a receiver may follow; undefined: every account. */
export type ReceiverScope = ReadonlySet<string> | undefined;

/**
 * The active receivers by the keyed hash of their token, under the secret-hashing key that made
 * each (keys are rotated; a token keeps its key until it is revoked), followed from the log as
 * admin tokens are: a receiver made by the CLI is accepted within a poll of the log, a revoked one
 * refused as soon as its revocation is read.
 */
export class ReceiverDirectory {
  private readonly receivers: SecretsByHash<AuthenticatedReceiver>;
  private readonly revoked = new Set<string>();
  private readonly scopes = new Map<string, ReadonlySet<string>>();

  constructor(hashers: SecretHashers) {
    this.receivers = new SecretsByHash(hashers);
  }

  get reader(): LogReader {
    return logReader(ssfReceiverEventTypes, ({ event }) => this.apply(event));
  }

  apply(event: SsfReceiverEvent): void {
    if (event.type === 'SsfReceiverRegistered') {
      if (this.revoked.has(event.receiverId)) return;
      this.receivers.add(event.receiverId, event.hashingKey, event.tokenHash, { receiverId: event.receiverId, name: event.name });
      if (event.accounts !== undefined) this.scopes.set(event.receiverId, new Set(event.accounts));
      return;
    }
    this.revoked.add(event.receiverId);
    this.receivers.remove(event.receiverId);
    this.scopes.delete(event.receiverId);
  }

  /** The accounts the receiver was scoped to when it was made; undefined: every account. */
  scopeOf(receiverId: string): ReceiverScope {
    return this.scopes.get(receiverId);
  }

  /** Found by keyed hash, compared in constant time (SecretsByHash); a key not at hand is SecretHashingKeyUnavailable. */
  authenticate(presented: string): AuthenticatedReceiver | undefined {
    return this.receivers.find(presented);
  }

  isActive(receiverId: string): boolean {
    return this.receivers.has(receiverId);
  }
}
