import { accountEventTypes, isEventOf, type AccountEvent, type AccountTokensRevoked, type ClientKeysSet, type CredentialTokensRevoked } from '@tessera/events';
import type { Decider } from './decider.js';
import { DomainError, assertNever } from './errors.js';
import { cutTimes, type TokenCut } from './token-cut.js';

/** An account and its credentials. Secrets never reach the domain: only their keyed hashes. */
export type AccountState =
  | { readonly status: 'none' }
  | {
      readonly status: 'registered';
      readonly accountId: string;
      readonly name: string;
      readonly permissions: readonly string[];
      /** Active v5 credential per API Login ID. */
      readonly apiCredentials: ReadonlyMap<string, { credentialId: string }>;
      /** Active v1 credential per API ID. */
      readonly legacyCredentials: ReadonlyMap<string, { credentialId: string }>;
      /** Disabled by an operator: its credentials get no token and its families no refresh until enabled. */
      readonly disabled: boolean;
    };

export const initialAccountState = (): AccountState => ({ status: 'none' });

export type AccountCommand =
  | {
      readonly type: 'RegisterAccount';
      readonly accountId: string;
      readonly name: string;
      readonly permissions: readonly string[];
      /** `hashingKey`: the fingerprint of the secret-hashing key the hash was made with. */
      readonly apiCredential: { credentialId: string; apiLoginId: string; transactionKeyHash: string; hashingKey: string };
      readonly legacyCredential?: { credentialId: string; apiId: string; apiKeyHash: string; hashingKey: string };
      readonly now: number;
    }
  | {
      readonly type: 'RotateTransactionKey';
      readonly apiLoginId: string;
      readonly credentialId: string;
      readonly transactionKeyHash: string;
      readonly hashingKey: string;
      readonly now: number;
      /** Also cut the access tokens issued under the old key (--revoke-tokens). */
      readonly revokeTokens?: TokenCut;
    }
  | { readonly type: 'SetPermissions'; readonly permissions: readonly string[]; readonly now: number; readonly revokeTokens?: TokenCut }
  /** The RFC 8707 audiences its tokens may be issued for, as a whole set. */
  | { readonly type: 'SetAudiences'; readonly audiences: readonly string[]; readonly now: number }
  /** The public keys its private_key_jwt assertions (RFC 7523) are checked with, as a whole set. */
  /** RFC 9449 section 5.2: whether its token requests must carry a DPoP proof. */
  | { readonly type: 'SetClientDpop'; readonly dpopBoundAccessTokens: boolean; readonly now: number }
  | { readonly type: 'SetClientKeys'; readonly jwks: ClientKeysSet['jwks']; readonly jwksUri?: string | undefined; readonly now: number }
  | {
      readonly type: 'AddLegacyCredential';
      readonly credentialId: string;
      readonly apiId: string;
      readonly apiKeyHash: string;
      readonly hashingKey: string;
      readonly now: number;
    }
  | { readonly type: 'RevokeLegacyCredential'; readonly apiId: string; readonly now: number; readonly revokeTokens?: TokenCut }
  /** An operator cuts every token of the account (POST /admin/v1/accounts/{id}/revoke-tokens). */
  | { readonly type: 'RevokeAccountTokens'; readonly now: number; readonly revokeTokens: TokenCut }
  /**
   * An operator disables the account: its live access tokens are cut with it (`revokeTokens`), so
   * enabling it later never brings them back. Disabling a disabled account appends nothing.
   */
  | { readonly type: 'DisableAccount'; readonly reason?: string | undefined; readonly actor: string; readonly now: number; readonly revokeTokens: TokenCut }
  /** Enabling an enabled account appends nothing. */
  | { readonly type: 'EnableAccount'; readonly actor: string; readonly now: number };

export function evolveAccount(state: AccountState, event: AccountEvent): AccountState {
  if (event.type === 'AccountRegistered') {
    return {
      status: 'registered',
      accountId: event.accountId,
      name: event.name,
      permissions: event.permissions,
      apiCredentials: new Map(),
      legacyCredentials: new Map(),
      disabled: false,
    };
  }
  if (state.status !== 'registered') return state;
  switch (event.type) {
    case 'ApiCredentialIssued':
      return { ...state, apiCredentials: withEntry(state.apiCredentials, event.apiLoginId, { credentialId: event.credentialId }) };
    case 'ApiCredentialRevoked':
      return { ...state, apiCredentials: withoutCredential(state.apiCredentials, event.apiLoginId, event.credentialId) };
    case 'LegacyCredentialIssued':
      return { ...state, legacyCredentials: withEntry(state.legacyCredentials, event.apiId, { credentialId: event.credentialId }) };
    case 'LegacyCredentialRevoked':
      return { ...state, legacyCredentials: withoutCredential(state.legacyCredentials, event.apiId, event.credentialId) };
    case 'PermissionsChanged':
      return { ...state, permissions: event.permissions };
    case 'AccountAudiencesSet':
    case 'ClientKeysSet':
    case 'ClientDpopSet':
      // Only the issuer's directory needs the audiences, the client keys and DPoP; an account's decisions do not.
      return state;
    case 'AccountTokensRevoked':
    case 'CredentialTokensRevoked':
      // A cut rejects tokens; the account and its credentials stay as they are.
      return state;
    case 'AccountDisabled':
      return { ...state, disabled: true };
    case 'AccountEnabled':
      return { ...state, disabled: false };
    default:
      return assertNever(event);
  }
}

export function decideAccount(command: AccountCommand, state: AccountState): AccountEvent[] {
  if (command.type === 'RegisterAccount') {
    if (state.status !== 'none') throw new DomainError('ERR_ACCOUNT_EXISTS', 'account already exists');
    const events: AccountEvent[] = [
      { type: 'AccountRegistered', v: 1, accountId: command.accountId, name: command.name, permissions: unique(command.permissions), at: command.now },
      { type: 'ApiCredentialIssued', v: 1, accountId: command.accountId, ...command.apiCredential, at: command.now },
    ];
    if (command.legacyCredential) {
      events.push({ type: 'LegacyCredentialIssued', v: 1, accountId: command.accountId, ...command.legacyCredential, at: command.now });
    }
    return events;
  }
  if (state.status !== 'registered') throw new DomainError('ERR_ACCOUNT_NOT_FOUND', 'account not found');
  const { accountId } = state;
  switch (command.type) {
    case 'RotateTransactionKey': {
      const current = state.apiCredentials.get(command.apiLoginId);
      if (!current) throw new DomainError('ERR_CREDENTIAL_NOT_FOUND', 'no active credential for that API Login ID');
      // Issue first, then revoke the old one: from this point only the new key authenticates.
      const events: AccountEvent[] = [
        {
          type: 'ApiCredentialIssued',
          v: 1,
          accountId,
          credentialId: command.credentialId,
          apiLoginId: command.apiLoginId,
          transactionKeyHash: command.transactionKeyHash,
          hashingKey: command.hashingKey,
          at: command.now,
        },
        { type: 'ApiCredentialRevoked', v: 1, accountId, credentialId: current.credentialId, apiLoginId: command.apiLoginId, at: command.now },
      ];
      // The cut comes after the change it backs (here and below): a reader that applies the events one
      // by one, with requests between them, can then only issue a token the cut kills, never one it misses.
      if (command.revokeTokens) {
        events.push(credentialCut(accountId, current.credentialId, { apiLoginId: command.apiLoginId }, command.now, command.revokeTokens, 'transaction-key-rotated'));
      }
      return events;
    }
    case 'SetPermissions':
      return [
        { type: 'PermissionsChanged', v: 1, accountId, permissions: unique(command.permissions), at: command.now },
        ...(command.revokeTokens ? [accountCut(accountId, command.now, command.revokeTokens, 'permissions-changed')] : []),
      ];
    case 'SetAudiences':
      return [{ type: 'AccountAudiencesSet', v: 1, accountId, audiences: unique(command.audiences), at: command.now }];
    case 'SetClientDpop':
      return [{ type: 'ClientDpopSet', v: 1, accountId, dpopBoundAccessTokens: command.dpopBoundAccessTokens, at: command.now }];
    case 'SetClientKeys':
      // With a URL the keys are fetched when needed; none are recorded beside it, so one source holds.
      return [
        command.jwksUri === undefined
          ? { type: 'ClientKeysSet', v: 1, accountId, jwks: command.jwks, at: command.now }
          : { type: 'ClientKeysSet', v: 1, accountId, jwks: { keys: [] }, jwksUri: command.jwksUri, at: command.now },
      ];
    case 'AddLegacyCredential':
      return [
        {
          type: 'LegacyCredentialIssued',
          v: 1,
          accountId,
          credentialId: command.credentialId,
          apiId: command.apiId,
          apiKeyHash: command.apiKeyHash,
          hashingKey: command.hashingKey,
          at: command.now,
        },
      ];
    case 'RevokeLegacyCredential': {
      const current = state.legacyCredentials.get(command.apiId);
      if (!current) throw new DomainError('ERR_CREDENTIAL_NOT_FOUND', 'no active legacy credential with that API ID');
      return [
        { type: 'LegacyCredentialRevoked', v: 1, accountId, credentialId: current.credentialId, apiId: command.apiId, at: command.now },
        ...(command.revokeTokens ? [credentialCut(accountId, current.credentialId, { apiId: command.apiId }, command.now, command.revokeTokens, 'legacy-key-revoked')] : []),
      ];
    }
    case 'RevokeAccountTokens':
      return [accountCut(accountId, command.now, command.revokeTokens, 'operator')];
    case 'DisableAccount':
      // Idempotent: a second disable (a retried request, two operators) changes nothing and cuts nothing.
      if (state.disabled) return [];
      return [
        { type: 'AccountDisabled', v: 1, accountId, ...(command.reason === undefined ? {} : { reason: command.reason }), actor: command.actor, at: command.now },
        // After the change it backs, as above: a reader between the two refuses new tokens before the cut lands.
        accountCut(accountId, command.now, command.revokeTokens, 'account-disabled'),
      ];
    case 'EnableAccount':
      return state.disabled ? [{ type: 'AccountEnabled', v: 1, accountId, actor: command.actor, at: command.now }] : [];
    default:
      return assertNever(command);
  }
}

function accountCut(accountId: string, now: number, cut: TokenCut, reason: string): AccountTokensRevoked {
  return { type: 'AccountTokensRevoked', v: 1, accountId, ...cutTimes(now, cut), reason, at: now };
}

function credentialCut(
  accountId: string,
  credentialId: string,
  client: { apiLoginId: string } | { apiId: string },
  now: number,
  cut: TokenCut,
  reason: string,
): CredentialTokensRevoked {
  return { type: 'CredentialTokensRevoked', v: 1, accountId, credentialId, ...client, ...cutTimes(now, cut), reason, at: now };
}

function withEntry<V>(map: ReadonlyMap<string, V>, key: string, value: V): ReadonlyMap<string, V> {
  return new Map(map).set(key, value);
}

function withoutCredential(
  map: ReadonlyMap<string, { credentialId: string }>,
  key: string,
  credentialId: string,
): ReadonlyMap<string, { credentialId: string }> {
  // A revocation of an already-replaced credential must not remove its successor.
  if (map.get(key)?.credentialId !== credentialId) return map;
  const next = new Map(map);
  next.delete(key);
  return next;
}

export const accountDecider: Decider<AccountCommand, AccountState, AccountEvent> = {
  isEvent: (event) => isEventOf(accountEventTypes, event),
  decide: decideAccount,
  evolve: evolveAccount,
  initialState: initialAccountState,
};

const unique = (permissions: readonly string[]) => [...new Set(permissions)];
