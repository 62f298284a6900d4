import type { AccountChange, AccountSummary, CreatedAccount, NewLegacyKey } from './account-service.js';

/**
 * The documented JSON answers of the account operations (README, Commands; docs/operations.md,
 * Admin API): what `tessera accounts … --json` prints and what the admin API's account routes
 * answer, made here once so the two can never differ. A secret is only in the answer of the
 * operation that made it.
 */

/** `accounts create`: `apiid` and `apikey` only with a legacy credential. */
export interface CreatedAccountAnswer {
  readonly account_id: string;
  readonly api_login_id: string;
  readonly transaction_key: string;
  readonly apiid?: string;
  readonly apikey?: string;
}

/** A row of `accounts list`: never a secret or a hash. */
export interface AccountRow {
  readonly account_id: string;
  readonly name: string;
  readonly permissions: readonly string[];
  readonly api_login_ids: readonly string[];
  readonly legacy_api_ids: readonly string[];
  /** Disabled: no token, no refresh, until enabled. */
  readonly status: 'enabled' | 'disabled';
}

/** `accounts rotate-key`: the new Transaction Key, shown once. */
export interface RotatedKeyAnswer {
  readonly account_id: string;
  readonly api_login_id: string;
  readonly transaction_key: string;
  readonly tokens_revoked_before?: string;
}

/** `set-permissions`, `revoke-legacy-key`: the events appended, and with revoke_tokens from when tokens are accepted again. */
export interface AccountChangeAnswer {
  readonly account_id: string;
  readonly events: readonly string[];
  readonly tokens_revoked_before?: string;
}

export interface AudiencesAnswer {
  readonly account_id: string;
  readonly audiences: readonly string[];
  readonly events: readonly string[];
}

export interface DpopAnswer {
  readonly account_id: string;
  readonly dpop_bound_access_tokens: boolean;
  readonly events: readonly string[];
}

/** `set-client-keys`: the kids of a JWKS set (none: authentication by assertion ends), or the URL the keys are fetched from. */
export type ClientKeysAnswer =
  | { readonly account_id: string; readonly kids: readonly string[]; readonly events: readonly string[] }
  | { readonly account_id: string; readonly jwks_url: string; readonly events: readonly string[] };

/** `add-legacy-key`: the new API ID and its key, shown once. */
export interface LegacyKeyAnswer {
  readonly account_id: string;
  readonly apiid: string;
  readonly apikey: string;
}

export function createdAccountAnswer(account: CreatedAccount): CreatedAccountAnswer {
  return {
    account_id: account.accountId,
    api_login_id: account.apiLoginId,
    transaction_key: account.transactionKey,
    ...(account.legacy ? { apiid: account.legacy.apiId, apikey: account.legacy.apiKey } : {}),
  };
}

export function accountRow(account: AccountSummary): AccountRow {
  return {
    account_id: account.accountId,
    name: account.name,
    permissions: [...account.permissions],
    api_login_ids: [...account.apiLoginIds],
    legacy_api_ids: [...account.legacyApiIds],
    status: account.disabled ? 'disabled' : 'enabled',
  };
}

export function rotatedKeyAnswer(rotated: { accountId: string; apiLoginId: string; transactionKey: string; tokensRevokedBefore?: number }): RotatedKeyAnswer {
  return { account_id: rotated.accountId, api_login_id: rotated.apiLoginId, transaction_key: rotated.transactionKey, ...tokensRevoked(rotated.tokensRevokedBefore) };
}

export function accountChangeAnswer(change: AccountChange): AccountChangeAnswer {
  return { account_id: change.accountId, events: [...change.events], ...tokensRevoked(change.tokensRevokedBefore) };
}

export function legacyKeyAnswer(added: { accountId: string } & NewLegacyKey): LegacyKeyAnswer {
  return { account_id: added.accountId, apiid: added.apiId, apikey: added.apiKey };
}

/** From when tokens are accepted again, as an ISO instant; nothing without a cut. */
function tokensRevoked(before: number | undefined): { tokens_revoked_before?: string } {
  return before === undefined ? {} : { tokens_revoked_before: new Date(before * 1000).toISOString() };
}
