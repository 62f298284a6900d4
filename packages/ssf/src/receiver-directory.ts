import { ssfReceiverEventTypes, type SsfReceiverEvent } from '@tessera/contracts';
import { sameKeyedHash } from '@tessera/domain';
import { logReader, type LogReader } from '@tessera/event-store';
import { SecretHashingKeyUnavailable, type SecretHashers } from '@tessera/tokens';

export interface AuthenticatedReceiver {
  readonly receiverId: string;
  readonly name: string;
}

interface StoredReceiver {
  readonly tokenHash: string;
  readonly receiver: AuthenticatedReceiver;
}

/**
 * The active receivers by the keyed hash of their token, per secret-hashing key that made it (keys
 * are rotated; a token keeps its key until it is revoked), followed from the log as admin tokens
 * are: a receiver made by the CLI is accepted within a poll of the log, a revoked one refused as
 * soon as its revocation is read.
 */
export class ReceiverDirectory {
  /** Hashing key fingerprint (undefined: the log's first key) → token hash → receiver. */
  private readonly byKey = new Map<string | undefined, Map<string, StoredReceiver>>();
  private readonly hashById = new Map<string, { readonly key: string | undefined; readonly tokenHash: string }>();
  private readonly revoked = new Set<string>();

  constructor(private readonly hashers: SecretHashers) {}

  get reader(): LogReader {
    return logReader(ssfReceiverEventTypes, ({ event }) => this.apply(event));
  }

  apply(event: SsfReceiverEvent): void {
    if (event.type === 'SsfReceiverRegistered') {
      if (this.revoked.has(event.receiverId)) return;
      const receivers = this.byKey.get(event.hashingKey) ?? new Map<string, StoredReceiver>();
      receivers.set(event.tokenHash, { tokenHash: event.tokenHash, receiver: { receiverId: event.receiverId, name: event.name } });
      this.byKey.set(event.hashingKey, receivers);
      this.hashById.set(event.receiverId, { key: event.hashingKey, tokenHash: event.tokenHash });
      return;
    }
    this.revoked.add(event.receiverId);
    const stored = this.hashById.get(event.receiverId);
    if (stored !== undefined) {
      const receivers = this.byKey.get(stored.key);
      receivers?.delete(stored.tokenHash);
      if (receivers?.size === 0) this.byKey.delete(stored.key);
    }
    this.hashById.delete(event.receiverId);
  }

  /**
   * Hashed under each key that made an active receiver's token and looked up by that hash, then
   * compared in constant time: never a byte-by-byte comparison of secrets. A key not at hand makes
   * the answer unknown (SecretHashingKeyUnavailable, a 503) unless another key finds the receiver.
   */
  authenticate(presented: string): AuthenticatedReceiver | undefined {
    let unavailable: SecretHashingKeyUnavailable | undefined;
    for (const [key, receivers] of this.byKey) {
      let presentedHash: string;
      try {
        presentedHash = this.hashers.hashUnder(key, presented);
      } catch (error) {
        if (!(error instanceof SecretHashingKeyUnavailable)) throw error;
        unavailable = error;
        continue;
      }
      const found = receivers.get(presentedHash);
      if (found !== undefined && sameKeyedHash(found.tokenHash, presentedHash)) return found.receiver;
    }
    if (unavailable) throw unavailable;
    return undefined;
  }

  isActive(receiverId: string): boolean {
    return this.hashById.has(receiverId);
  }
}
