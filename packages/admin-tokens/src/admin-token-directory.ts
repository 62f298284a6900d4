import { adminTokenEventTypes, type AdminTokenEvent } from '@tessera/events';
import { logReader, type LogReader } from '@tessera/event-store';
import { SecretsByHash } from '@tessera/hashing-key';
import type { SecretHashers } from '@tessera/tokens';

/** The admin token a request presented, once authenticated: never the token or its hash. */
export interface AuthenticatedAdmin {
  readonly id: string;
  readonly name: string;
  readonly scopes: ReadonlySet<string>;
}

/**
 * The read model the admin API authenticates against: the active admin tokens by keyed hash, under
 * the secret-hashing key that made each (keys are rotated; a token keeps its key until it is
 * revoked). It follows the log (a LogReader), so a token made by the CLI works within a poll of the
 * log, and a revoked one stops as soon as its revocation is read. An expired one stops at its
 * expiry, by the clock `now` reads (the host's): nothing in the log marks it.
 */
export class AdminTokenDirectory {
  private readonly tokens: SecretsByHash<{ readonly expiresAt: number | undefined; readonly admin: AuthenticatedAdmin }>;
  /** The same tokens by id: a console session names its admin token by id, never by the token. */
  private readonly byId = new Map<string, { readonly expiresAt: number | undefined; readonly admin: AuthenticatedAdmin }>();

  /** `now`: epoch seconds, from the process's clock. */
  constructor(
    hashers: SecretHashers,
    private readonly now: () => number,
  ) {
    this.tokens = new SecretsByHash(hashers);
  }

  /** What to follow in the log: the whole history, as a token without an expiry lasts until it is revoked. */
  get reader(): LogReader {
    return logReader(adminTokenEventTypes, ({ event }) => this.apply(event));
  }

  apply(event: AdminTokenEvent): void {
    if (event.type === 'AdminTokenIssued') {
      const admin = { id: event.adminTokenId, name: event.name, scopes: new Set(event.scopes) };
      const entry = { expiresAt: event.expiresAt, admin };
      this.tokens.add(event.adminTokenId, event.hashingKey, event.tokenHash, entry);
      this.byId.set(event.adminTokenId, entry);
      return;
    }
    this.tokens.remove(event.adminTokenId);
    this.byId.delete(event.adminTokenId);
  }

  /**
   * The active admin token presented, or undefined: unknown, revoked, or expired (from its
   * `expiresAt` on). Found by keyed hash, compared in constant time (SecretsByHash); a key not at
   * hand is SecretHashingKeyUnavailable.
   */
  authenticate(presented: string): AuthenticatedAdmin | undefined {
    const found = this.tokens.find(presented);
    if (found === undefined || (found.expiresAt !== undefined && this.now() >= found.expiresAt)) return undefined;
    return found.admin;
  }

  /**
   * The admin token with this id while it is active (not revoked, not expired), or undefined: what a
   * console session is checked against on every request, so revoking the token ends its sessions.
   */
  active(adminTokenId: string): (AuthenticatedAdmin & { readonly expiresAt: number | undefined }) | undefined {
    const found = this.byId.get(adminTokenId);
    if (found === undefined || (found.expiresAt !== undefined && this.now() >= found.expiresAt)) return undefined;
    return { ...found.admin, expiresAt: found.expiresAt };
  }

  get size(): number {
    return this.tokens.size;
  }
}
