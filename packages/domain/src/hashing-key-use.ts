import type { AccountEvent, AdminTokenEvent, FamilyEvent } from '@tessera/contracts';
import { assertNever } from './errors.js';

/** What still holds a hash made with one secret-hashing key, and so needs that key to be checked. */
export interface HashingKeyDependents {
  /** Active v5 credentials. */
  readonly transactionKeys: number;
  /** Active v1 credentials. */
  readonly apiKeys: number;
  /** Token families not revoked whose refresh token has not expired, with a hash under this key in their history (reuse detection compares with used ones). */
  readonly refreshTokenFamilies: number;
  /** Admin tokens not revoked. */
  readonly adminTokens: number;
}

export const noDependents: HashingKeyDependents = { transactionKeys: 0, apiKeys: 0, refreshTokenFamilies: 0, adminTokens: 0 };

/**
 * Which secret-hashing key each stored hash that can still be presented was made with, folded from
 * the log in order: a retired key is needed until nothing here names it. A credential depends on
 * its key until it is rotated or revoked, a family until its refresh token expires or it is
 * revoked, an admin token until it is revoked. Keys are fingerprints; undefined is the log's
 * first key (events written before keys could be rotated).
 */
export class HashingKeyUse {
  private readonly credentials = new Map<string, { readonly kind: 'transactionKeys' | 'apiKeys'; readonly key: string | undefined }>();
  private readonly families = new Map<string, { readonly keys: ReadonlySet<string | undefined>; readonly refreshExpiresAt: number }>();
  private readonly adminTokens = new Map<string, string | undefined>();

  apply(event: AccountEvent | FamilyEvent | AdminTokenEvent): void {
    switch (event.type) {
      case 'ApiCredentialIssued':
        this.credentials.set(event.credentialId, { kind: 'transactionKeys', key: event.hashingKey });
        return;
      case 'LegacyCredentialIssued':
        this.credentials.set(event.credentialId, { kind: 'apiKeys', key: event.hashingKey });
        return;
      case 'ApiCredentialRevoked':
      case 'LegacyCredentialRevoked':
        this.credentials.delete(event.credentialId);
        return;
      case 'TokenIssued':
        this.families.set(event.familyId, { keys: new Set([event.hashingKey]), refreshExpiresAt: event.refreshExpiresAt });
        return;
      case 'TokenRotated': {
        const keys = new Set(this.families.get(event.familyId)?.keys).add(event.hashingKey);
        this.families.set(event.familyId, { keys, refreshExpiresAt: event.refreshExpiresAt });
        return;
      }
      case 'TokenRevoked':
        this.families.delete(event.familyId);
        return;
      case 'AdminTokenIssued':
        this.adminTokens.set(event.adminTokenId, event.hashingKey);
        return;
      case 'AdminTokenRevoked':
        this.adminTokens.delete(event.adminTokenId);
        return;
      case 'AccountRegistered':
      case 'PermissionsChanged':
      case 'AccountTokensRevoked':
      case 'CredentialTokensRevoked':
        return;
      default:
        assertNever(event);
    }
  }

  /**
   * What depends on each key at `now` (epoch seconds), by fingerprint; `original` names the key of
   * hashes that name none.
   */
  dependents(now: number, original: string): ReadonlyMap<string, HashingKeyDependents> {
    const counts = new Map<string, HashingKeyDependents>();
    const add = (key: string | undefined, field: keyof HashingKeyDependents) => {
      const fingerprint = key ?? original;
      const current = counts.get(fingerprint) ?? noDependents;
      counts.set(fingerprint, { ...current, [field]: current[field] + 1 });
    };
    for (const { kind, key } of this.credentials.values()) add(key, kind);
    for (const family of this.families.values()) {
      if (family.refreshExpiresAt <= now) continue;
      for (const key of new Set([...family.keys].map((key) => key ?? original))) add(key, 'refreshTokenFamilies');
    }
    for (const key of this.adminTokens.values()) add(key, 'adminTokens');
    return counts;
  }
}
