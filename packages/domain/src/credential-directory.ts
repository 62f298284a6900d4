import type { AccountEvent, ClientPublicJwk } from '@tessera/contracts';
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
  /** The fingerprint of the secret-hashing key `secretHash` was made with; undefined: the log's first key. */
  readonly hashingKey: string | undefined;
}

export interface AccountProfile {
  readonly accountId: string;
  readonly name: string;
  readonly permissions: readonly string[];
  /** The RFC 8707 `resource` values its tokens may be issued for; none: only the default audience. */
  readonly audiences?: readonly string[] | undefined;
  /** The public keys its private_key_jwt assertions are checked with; none (and no `clientKeysUri`): it cannot authenticate by assertion. */
  readonly clientKeys?: readonly ClientPublicJwk[] | undefined;
  /** Where its private_key_jwt keys are fetched from (`--jwks-url`), instead of `clientKeys`. */
  readonly clientKeysUri?: string | undefined;
  /** RFC 9449 section 5.2 (`dpop_bound_access_tokens`): its token requests must carry a DPoP proof. */
  readonly dpopBoundAccessTokens?: boolean | undefined;
  /** Disabled by an operator: none of its credentials authenticates, none of its families refreshes. */
  readonly disabled?: boolean | undefined;
  /** When it was last disabled (epoch seconds), kept once enabled again: families last issued by then stay refused. */
  readonly lastDisabledAt?: number | undefined;
}

export class CredentialDirectory {
  private readonly apiLogins = new Map<string, ActiveCredential>();
  private readonly legacyApiIds = new Map<string, ActiveCredential>();
  private readonly accounts = new Map<string, AccountProfile>();
  /** Account id or client id (API Login ID, API ID) → the `notBefore` of its latest cut. */
  private readonly cuts = new Map<string, number>();

  apply(event: AccountEvent): void {
    switch (event.type) {
      case 'AccountRegistered':
        this.accounts.set(event.accountId, { accountId: event.accountId, name: event.name, permissions: event.permissions });
        return;
      case 'ApiCredentialIssued':
        this.apiLogins.set(event.apiLoginId, { accountId: event.accountId, credentialId: event.credentialId, secretHash: event.transactionKeyHash, hashingKey: event.hashingKey });
        return;
      case 'ApiCredentialRevoked':
        if (this.apiLogins.get(event.apiLoginId)?.credentialId === event.credentialId) this.apiLogins.delete(event.apiLoginId);
        return;
      case 'LegacyCredentialIssued':
        this.legacyApiIds.set(event.apiId, { accountId: event.accountId, credentialId: event.credentialId, secretHash: event.apiKeyHash, hashingKey: event.hashingKey });
        return;
      case 'LegacyCredentialRevoked':
        if (this.legacyApiIds.get(event.apiId)?.credentialId === event.credentialId) this.legacyApiIds.delete(event.apiId);
        return;
      case 'PermissionsChanged': {
        const account = this.accounts.get(event.accountId);
        if (account) this.accounts.set(event.accountId, { ...account, permissions: event.permissions });
        return;
      }
      case 'AccountAudiencesSet': {
        const account = this.accounts.get(event.accountId);
        if (account) this.accounts.set(event.accountId, { ...account, audiences: event.audiences });
        return;
      }
      case 'ClientKeysSet': {
        const account = this.accounts.get(event.accountId);
        // The last set holds whole: keys from a file end a URL, and a URL ends the keys.
        if (account) this.accounts.set(event.accountId, { ...account, clientKeys: event.jwks.keys, clientKeysUri: event.jwksUri });
        return;
      }
      case 'ClientDpopSet': {
        const account = this.accounts.get(event.accountId);
        if (account) this.accounts.set(event.accountId, { ...account, dpopBoundAccessTokens: event.dpopBoundAccessTokens });
        return;
      }
      case 'AccountDisabled':
      case 'AccountEnabled': {
        const account = this.accounts.get(event.accountId);
        if (!account) return;
        if (event.type === 'AccountEnabled') this.accounts.set(event.accountId, { ...account, disabled: false });
        // The latest disable, in whatever order they arrive (the log, then again from a region's topic).
        else this.accounts.set(event.accountId, { ...account, disabled: true, lastDisabledAt: Math.max(account.lastDisabledAt ?? 0, event.at) });
        return;
      }
      case 'AccountTokensRevoked':
        this.cut(`account:${event.accountId}`, event.notBefore);
        return;
      case 'CredentialTokensRevoked':
        this.cut(`client:${event.apiLoginId ?? event.apiId ?? ''}`, event.notBefore);
        return;
      default:
        assertNever(event);
    }
  }

  /** The credential a client authenticates with; undefined when unknown, revoked, or its account is disabled. */
  apiCredential(apiLoginId: string): ActiveCredential | undefined {
    return this.enabledOnly(this.apiLogins.get(apiLoginId));
  }

  /** As apiCredential, for v1. */
  legacyCredential(apiId: string): ActiveCredential | undefined {
    return this.enabledOnly(this.legacyApiIds.get(apiId));
  }

  /**
   * A disabled account's credentials are answered as unknown ones: the client gets the answer a
   * wrong key gets (401), and the time taken does not tell it the account exists.
   */
  private enabledOnly(credential: ActiveCredential | undefined): ActiveCredential | undefined {
    return credential && this.accounts.get(credential.accountId)?.disabled ? undefined : credential;
  }

  account(accountId: string): AccountProfile | undefined {
    return this.accounts.get(accountId);
  }

  /**
   * The earliest `iat` a new token for this account and client id may carry: a cut refuses tokens
   * issued before its `notBefore`, which lies up to a second ahead (token-cut.ts), so a token issued
   * meanwhile is dated at it rather than born refused. 0 when neither was ever cut.
   */
  tokensValidFrom(accountId: string, clientId: string): number {
    if (this.cuts.size === 0) return 0;
    return Math.max(this.cuts.get(`account:${accountId}`) ?? 0, this.cuts.get(`client:${clientId}`) ?? 0);
  }

  /** Applying a cut twice, or out of order (once at once in-process, once from the log), keeps the latest. */
  private cut(key: string, notBefore: number): void {
    this.cuts.set(key, Math.max(this.cuts.get(key) ?? 0, notBefore));
  }

  /**
   * Whether a family whose current generation was issued at `issuedAt` (epoch seconds) outlived every
   * disable of its account: one issued by then is refused a refresh even once the account is enabled
   * again, so enabling brings back no family the disable ended, wherever it is homed (decision 0030).
   */
  survivedDisables(accountId: string, issuedAt: number): boolean {
    const disabledAt = this.accounts.get(accountId)?.lastDisabledAt;
    return disabledAt === undefined || issuedAt > disabledAt;
  }

  /**
   * Whether a credential is still active: a refresh of a family made with a rotated-away key is
   * refused, and so is one of a disabled account's families.
   */
  isApiCredentialActive(apiLoginId: string, credentialId: string): boolean {
    return this.apiCredential(apiLoginId)?.credentialId === credentialId;
  }
}
