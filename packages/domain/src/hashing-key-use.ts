import type { AccountEvent, AdminTokenEvent, FamilyEvent, SsfReceiverEvent, SsfStreamEvent, SsfStreamConfiguration } from '@tessera/events';
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
  /** Shared Signals receivers not revoked (their token's hash). */
  readonly ssfReceivers: number;
  /** Shared Signals push streams not deleted whose Authorization header is sealed under a key derived from this one. */
  readonly ssfPushHeaders: number;
}

export const noDependents: HashingKeyDependents = { transactionKeys: 0, apiKeys: 0, refreshTokenFamilies: 0, adminTokens: 0, ssfReceivers: 0, ssfPushHeaders: 0 };

/** The key a sealed push header names (`v1.<fingerprint>.…`), if the stream has one. */
function sealingKeyOf(configuration: SsfStreamConfiguration): string | undefined {
  const { delivery } = configuration;
  return delivery.method === 'push' ? delivery.sealedAuthorization?.split('.')[1] : undefined;
}

/**
 * Which secret-hashing key each stored hash that can still be presented was made with, folded from
 * the log in order: a retired key is needed until nothing here names it. A credential depends on
 * its key until it is rotated or revoked, a family until its refresh token expires or it is
 * revoked, an admin token or a Shared Signals receiver until it is revoked, a push stream's sealed
 * header until the stream is deleted or its header replaced. Keys are fingerprints; undefined is the log's
 * first key (events written before keys could be rotated).
 */
export class HashingKeyUse {
  private readonly credentials = new Map<string, { readonly kind: 'transactionKeys' | 'apiKeys'; readonly key: string | undefined }>();
  private readonly families = new Map<string, { readonly keys: ReadonlySet<string | undefined>; readonly refreshExpiresAt: number }>();
  private readonly adminTokens = new Map<string, string | undefined>();
  private readonly ssfReceivers = new Map<string, string | undefined>();
  private readonly ssfPushHeaders = new Map<string, string>();

  apply(event: AccountEvent | FamilyEvent | AdminTokenEvent | SsfReceiverEvent | SsfStreamEvent): void {
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
      case 'SsfReceiverRegistered':
        this.ssfReceivers.set(event.receiverId, event.hashingKey);
        return;
      case 'SsfReceiverRevoked':
        this.ssfReceivers.delete(event.receiverId);
        return;
      case 'SsfStreamCreated':
      case 'SsfStreamUpdated':
      case 'SsfStreamSnapshotted': {
        const key = sealingKeyOf(event.configuration);
        if (key === undefined) this.ssfPushHeaders.delete(event.streamId);
        else this.ssfPushHeaders.set(event.streamId, key);
        return;
      }
      case 'SsfStreamDeleted':
        this.ssfPushHeaders.delete(event.streamId);
        return;
      case 'SsfStreamStatusChanged':
      case 'SsfSubjectAdded':
      case 'SsfSubjectRemoved':
      case 'SsfVerificationRequested':
        return;
      case 'AccountRegistered':
      case 'PermissionsChanged':
      case 'AccountAudiencesSet':
      case 'ClientKeysSet':
      case 'ClientDpopSet':
      case 'AccountTokensRevoked':
      case 'CredentialTokensRevoked':
      case 'AccountDisabled':
      case 'AccountEnabled':
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
    for (const key of this.ssfReceivers.values()) add(key, 'ssfReceivers');
    for (const key of this.ssfPushHeaders.values()) add(key, 'ssfPushHeaders');
    return counts;
  }
}
