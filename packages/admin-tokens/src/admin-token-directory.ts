import { adminTokenEventTypes, type AdminTokenEvent } from '@tessera/contracts';
import { sameKeyedHash } from '@tessera/domain';
import { logReader, type LogReader } from '@tessera/event-store';
import type { SecretHasher } from '@tessera/tokens';

/** The admin token a request presented, once authenticated: never the token or its hash. */
export interface AuthenticatedAdmin {
  readonly id: string;
  readonly name: string;
  readonly scopes: ReadonlySet<string>;
}

/**
 * The read model the admin API authenticates against: the active admin tokens by keyed hash. It
 * follows the log (a LogReader), so a token made by the CLI works within a poll of the log, and a
 * revoked one stops as soon as its revocation is read. An expired one stops at its expiry, by the
 * clock `now` reads (the host's): nothing in the log marks it.
 */
export class AdminTokenDirectory {
  private readonly byHash = new Map<string, { readonly tokenHash: string; readonly expiresAt: number | undefined; readonly admin: AuthenticatedAdmin }>();
  private readonly hashById = new Map<string, string>();

  /** `now`: epoch seconds, from the process's clock. */
  constructor(
    private readonly hasher: SecretHasher,
    private readonly now: () => number,
  ) {}

  /** What to follow in the log: the whole history, as a token without an expiry lasts until it is revoked. */
  get reader(): LogReader {
    return logReader(adminTokenEventTypes, ({ event }) => this.apply(event));
  }

  apply(event: AdminTokenEvent): void {
    if (event.type === 'AdminTokenIssued') {
      this.byHash.set(event.tokenHash, {
        tokenHash: event.tokenHash,
        expiresAt: event.expiresAt,
        admin: { id: event.adminTokenId, name: event.name, scopes: new Set(event.scopes) },
      });
      this.hashById.set(event.adminTokenId, event.tokenHash);
      return;
    }
    const hash = this.hashById.get(event.adminTokenId);
    if (hash !== undefined) this.byHash.delete(hash);
    this.hashById.delete(event.adminTokenId);
  }

  /**
   * The active admin token presented, or undefined: unknown, revoked, or expired (from its
   * `expiresAt` on). The presented token is hashed with the keyed hasher and looked up by that
   * hash; the stored hash is then compared in constant time, so what decides is never a
   * byte-by-byte comparison of secrets.
   */
  authenticate(presented: string): AuthenticatedAdmin | undefined {
    const presentedHash = this.hasher.hash(presented);
    const found = this.byHash.get(presentedHash);
    if (found === undefined || !sameKeyedHash(found.tokenHash, presentedHash)) return undefined;
    if (found.expiresAt !== undefined && this.now() >= found.expiresAt) return undefined;
    return found.admin;
  }

  get size(): number {
    return this.byHash.size;
  }
}
