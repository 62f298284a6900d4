import { adminTokenEventTypes, type AdminTokenEvent } from '@tessera/contracts';
import { sameKeyedHash } from '@tessera/domain';
import { logReader, type LogReader } from '@tessera/event-store';
import { SecretHashingKeyUnavailable, type SecretHashers } from '@tessera/tokens';

/** The admin token a request presented, once authenticated: never the token or its hash. */
export interface AuthenticatedAdmin {
  readonly id: string;
  readonly name: string;
  readonly scopes: ReadonlySet<string>;
}

interface StoredAdminToken {
  readonly tokenHash: string;
  /** Epoch seconds; undefined: it lasts until revoked. */
  readonly expiresAt: number | undefined;
  readonly admin: AuthenticatedAdmin;
}

/**
 * The read model the admin API authenticates against: the active admin tokens by keyed hash, per
 * secret-hashing key that made them (keys are rotated; a token keeps its key until it is revoked).
 * It follows the log (a LogReader), so a token made by the CLI works within a poll of the log, and
 * a revoked one stops as soon as its revocation is read. An expired one stops at its expiry, by the
 * clock `now` reads (the host's): nothing in the log marks it.
 */
export class AdminTokenDirectory {
  /** Hashing key fingerprint (undefined: the log's first key) → token hash → token. */
  private readonly byKey = new Map<string | undefined, Map<string, StoredAdminToken>>();
  private readonly hashById = new Map<string, { readonly key: string | undefined; readonly tokenHash: string }>();

  /** `now`: epoch seconds, from the process's clock. */
  constructor(
    private readonly hashers: SecretHashers,
    private readonly now: () => number,
  ) {}

  /** What to follow in the log: the whole history, as a token without an expiry lasts until it is revoked. */
  get reader(): LogReader {
    return logReader(adminTokenEventTypes, ({ event }) => this.apply(event));
  }

  apply(event: AdminTokenEvent): void {
    if (event.type === 'AdminTokenIssued') {
      const tokens = this.byKey.get(event.hashingKey) ?? new Map<string, StoredAdminToken>();
      tokens.set(event.tokenHash, {
        tokenHash: event.tokenHash,
        expiresAt: event.expiresAt,
        admin: { id: event.adminTokenId, name: event.name, scopes: new Set(event.scopes) },
      });
      this.byKey.set(event.hashingKey, tokens);
      this.hashById.set(event.adminTokenId, { key: event.hashingKey, tokenHash: event.tokenHash });
      return;
    }
    const stored = this.hashById.get(event.adminTokenId);
    if (stored !== undefined) {
      const tokens = this.byKey.get(stored.key);
      tokens?.delete(stored.tokenHash);
      if (tokens?.size === 0) this.byKey.delete(stored.key);
    }
    this.hashById.delete(event.adminTokenId);
  }

  /**
   * The active admin token presented, or undefined: unknown, revoked, or expired (from its
   * `expiresAt` on). The presented token is hashed under each key that made an active token and
   * looked up by that hash; the stored hash is then compared in constant time, so what decides is
   * never a byte-by-byte comparison of secrets. A key that is not at hand makes the answer unknown
   * (SecretHashingKeyUnavailable) unless another key finds the token.
   */
  authenticate(presented: string): AuthenticatedAdmin | undefined {
    let unavailable: SecretHashingKeyUnavailable | undefined;
    for (const [key, tokens] of this.byKey) {
      let presentedHash: string;
      try {
        presentedHash = this.hashers.hashUnder(key, presented);
      } catch (error) {
        if (!(error instanceof SecretHashingKeyUnavailable)) throw error;
        unavailable = error;
        continue;
      }
      const found = tokens.get(presentedHash);
      if (found === undefined || !sameKeyedHash(found.tokenHash, presentedHash)) continue;
      if (found.expiresAt !== undefined && this.now() >= found.expiresAt) return undefined;
      return found.admin;
    }
    if (unavailable) throw unavailable;
    return undefined;
  }

  get size(): number {
    return this.hashById.size;
  }
}
