import {
  accountChangeAnswer,
  createdAccountAnswer,
  legacyKeyAnswer,
  rotatedKeyAnswer,
  type AccountChangeAnswer,
  type AccountRow,
  type AccountService,
  type AudiencesAnswer,
  type CreatedAccountAnswer,
  type DpopAnswer,
  type LegacyKeyAnswer,
  type RotatedKeyAnswer,
} from '@tessera/accounts';
import { accountStatusAnswer, type AccountStatus, type AccountStatusAnswer } from '@tessera/admin/account-status';

/** The kids of a JWKS set on an account (none: private_key_jwt refused). */
export interface ClientKeysSetAnswer {
  readonly account_id: string;
  readonly kids: readonly string[];
  readonly events: readonly string[];
}

/** The URL an account's keys are fetched from. */
export interface ClientKeysUrlAnswer {
  readonly account_id: string;
  readonly jwks_url: string;
  readonly events: readonly string[];
}

/**
 * What `tessera accounts` does, whoever does it: the account service on the data folder, or the
 * admin API of a running issuer (TESSERA_ADMIN_URL). Each answer is the documented --json object,
 * so the command prints the same whichever does the work.
 */
export interface AccountOperations {
  create(input: { name: string; permissions: readonly string[]; legacy: boolean }): Promise<CreatedAccountAnswer>;
  list(): Promise<AccountRow[]>;
  rotateKey(target: { accountId?: string | undefined; apiLoginId?: string | undefined }, revokeTokens: boolean): Promise<RotatedKeyAnswer>;
  setPermissions(accountId: string, permissions: readonly string[], revokeTokens: boolean): Promise<AccountChangeAnswer>;
  setAudiences(accountId: string, audiences: readonly string[]): Promise<AudiencesAnswer>;
  setClientDpop(accountId: string, required: boolean): Promise<DpopAnswer>;
  setClientKeys(accountId: string, jwks: unknown): Promise<ClientKeysSetAnswer>;
  setClientKeysUrl(accountId: string, url: string): Promise<ClientKeysUrlAnswer>;
  addLegacyKey(accountId: string): Promise<LegacyKeyAnswer>;
  revokeLegacyKey(accountId: string, apiId: string, revokeTokens: boolean): Promise<AccountChangeAnswer>;
  disable(accountId: string, reason: string | undefined): Promise<AccountStatusAnswer>;
  enable(accountId: string): Promise<AccountStatusAnswer>;
}

/** The operations on the data folder: the account service, its results as the answers. */
export function localAccountOperations(
  accounts: AccountService,
  parts: { readonly list: () => Promise<AccountRow[]>; readonly plainHttpAllowed: (url: URL) => boolean; readonly status: AccountStatus },
): AccountOperations {
  return {
    create: async (input) => createdAccountAnswer(await accounts.create(input)),
    list: parts.list,
    rotateKey: async (target, revokeTokens) => rotatedKeyAnswer(await accounts.rotateKey({ ...(target.accountId ? { accountId: target.accountId } : {}), ...(target.apiLoginId ? { apiLoginId: target.apiLoginId } : {}) }, { revokeTokens })),
    setPermissions: async (accountId, permissions, revokeTokens) => accountChangeAnswer(await accounts.setPermissions(accountId, permissions, { revokeTokens })),
    setAudiences: async (accountId, audiences) => {
      const changed = await accounts.setAudiences(accountId, audiences);
      return { account_id: changed.accountId, audiences: [...audiences], events: [...changed.events] };
    },
    setClientDpop: async (accountId, required) => {
      const changed = await accounts.setClientDpop(accountId, required);
      return { account_id: changed.accountId, dpop_bound_access_tokens: required, events: [...changed.events] };
    },
    setClientKeys: async (accountId, jwks) => {
      const changed = await accounts.setClientKeys(accountId, jwks);
      return { account_id: changed.accountId, kids: [...changed.kids], events: [...changed.events] };
    },
    setClientKeysUrl: async (accountId, url) => {
      const changed = await accounts.setClientKeysUrl(accountId, url, { plainHttpAllowed: parts.plainHttpAllowed });
      return { account_id: changed.accountId, jwks_url: changed.jwksUri, events: [...changed.events] };
    },
    addLegacyKey: async (accountId) => legacyKeyAnswer(await accounts.addLegacyKey(accountId)),
    revokeLegacyKey: async (accountId, apiId, revokeTokens) => accountChangeAnswer(await accounts.revokeLegacyKey(accountId, apiId, { revokeTokens })),
    disable: async (accountId, reason) => accountStatusAnswer(await parts.status.disable(accountId, { reason }, { actor: 'cli' })),
    enable: async (accountId) => accountStatusAnswer(await parts.status.enable(accountId, { actor: 'cli' })),
  };
}
