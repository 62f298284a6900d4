import type { AccountEvent } from '@tessera/contracts';
import { assertNever } from './errors.js';

/**
 * The read model the issuer authenticates against: API Login ID (v5) and API ID (v1) to the
 * account and the keyed hash of the active secret. Built by folding account events in log
 * order; mutable because it is rebuilt from the log, never persisted.
 */
export interface ActiveCredential {
  readonly accountId: string;
  readonly credentialId: string;
  readonly secretHash: string;
}

export interface AccountProfile {
  readonly accountId: string;
  readonly name: string;
  readonly permissions: readonly string[];
}

export class CredentialDirectory {
  private readonly apiLogins = new Map<string, ActiveCredential>();
  private readonly legacyApiIds = new Map<string, ActiveCredential>();
  private readonly accounts = new Map<string, AccountProfile>();

  apply(event: AccountEvent): void {
    switch (event.type) {
      case 'AccountRegistered':
        this.accounts.set(event.accountId, { accountId: event.accountId, name: event.name, permissions: event.permissions });
        return;
      case 'ApiCredentialIssued':
        this.apiLogins.set(event.apiLoginId, { accountId: event.accountId, credentialId: event.credentialId, secretHash: event.transactionKeyHash });
        return;
      case 'ApiCredentialRevoked':
        if (this.apiLogins.get(event.apiLoginId)?.credentialId === event.credentialId) this.apiLogins.delete(event.apiLoginId);
        return;
      case 'LegacyCredentialIssued':
        this.legacyApiIds.set(event.apiId, { accountId: event.accountId, credentialId: event.credentialId, secretHash: event.apiKeyHash });
        return;
      case 'LegacyCredentialRevoked':
        if (this.legacyApiIds.get(event.apiId)?.credentialId === event.credentialId) this.legacyApiIds.delete(event.apiId);
        return;
      case 'PermissionsChanged': {
        const account = this.accounts.get(event.accountId);
        if (account) this.accounts.set(event.accountId, { ...account, permissions: event.permissions });
        return;
      }
      default:
        assertNever(event);
    }
  }

  apiCredential(apiLoginId: string): ActiveCredential | undefined {
    return this.apiLogins.get(apiLoginId);
  }

  legacyCredential(apiId: string): ActiveCredential | undefined {
    return this.legacyApiIds.get(apiId);
  }

  account(accountId: string): AccountProfile | undefined {
    return this.accounts.get(accountId);
  }

  /** Whether a credential is still active: a refresh of a family made with a rotated-away key is refused. */
  isApiCredentialActive(apiLoginId: string, credentialId: string): boolean {
    return this.apiLogins.get(apiLoginId)?.credentialId === credentialId;
  }
}
