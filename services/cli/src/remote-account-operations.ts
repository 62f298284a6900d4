import type { AccountChangeAnswer, AccountRow, AudiencesAnswer, CreatedAccountAnswer, DpopAnswer, LegacyKeyAnswer, RotatedKeyAnswer } from '@tessera/accounts';
import type { AccountStatusAnswer } from '@tessera/admin/account-status';
import type { AccountOperations, ClientKeysSetAnswer, ClientKeysUrlAnswer } from './account-operations.js';
import { NotFound } from './cli-error.js';
import type { RemoteAdmin } from './remote-admin.js';

/** The largest page the admin API gives; the CLI lists every account, a page at a time. */
const pageSize = 500;

/** The account operations over the admin API (docs/operations.md, Admin API): the server checks, appends and answers. */
export function remoteAccountOperations(admin: RemoteAdmin): AccountOperations {
  const account = (accountId: string) => `/admin/v1/accounts/${encodeURIComponent(accountId)}`;

  async function list(): Promise<AccountRow[]> {
    const rows: AccountRow[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=${pageSize}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page: { accounts: AccountRow[]; next_cursor: string | null } = await admin.send('GET', `/admin/v1/accounts${query}`);
      rows.push(...page.accounts);
      cursor = page.next_cursor;
    } while (cursor !== null);
    return rows;
  }

  return {
    create: (input) => admin.send<CreatedAccountAnswer>('POST', '/admin/v1/accounts', { name: input.name, permissions: input.permissions, ...(input.legacy ? { legacy: true } : {}) }),
    list,
    async rotateKey(target, revokeTokens) {
      // The route names the account: an API Login ID alone is looked up among the accounts first.
      const accountId = target.accountId ?? (await list()).find((row) => row.api_login_ids.includes(target.apiLoginId ?? ''))?.account_id;
      if (accountId === undefined) throw new NotFound(`no account has API Login ID ${target.apiLoginId ?? ''}`);
      return admin.send<RotatedKeyAnswer>('POST', `${account(accountId)}/rotate-key`, { ...(target.apiLoginId ? { api_login_id: target.apiLoginId } : {}), ...(revokeTokens ? { revoke_tokens: true } : {}) });
    },
    setPermissions: (accountId, permissions, revokeTokens) => admin.send<AccountChangeAnswer>('PUT', `${account(accountId)}/permissions`, { permissions, ...(revokeTokens ? { revoke_tokens: true } : {}) }),
    setAudiences: (accountId, audiences) => admin.send<AudiencesAnswer>('PUT', `${account(accountId)}/audiences`, { audiences }),
    setClientDpop: (accountId, required) => admin.send<DpopAnswer>('PUT', `${account(accountId)}/dpop`, { dpop_bound_access_tokens: required }),
    setClientKeys: (accountId, jwks) => admin.send<ClientKeysSetAnswer>('PUT', `${account(accountId)}/client-keys`, { jwks }),
    setClientKeysUrl: (accountId, url) => admin.send<ClientKeysUrlAnswer>('PUT', `${account(accountId)}/client-keys`, { jwks_uri: url }),
    addLegacyKey: (accountId) => admin.send<LegacyKeyAnswer>('POST', `${account(accountId)}/legacy-keys`, {}),
    revokeLegacyKey: (accountId, apiId, revokeTokens) =>
      admin.send<AccountChangeAnswer>('POST', `${account(accountId)}/legacy-keys/${encodeURIComponent(apiId)}/revoke`, revokeTokens ? { revoke_tokens: true } : {}),
    disable: (accountId, reason) => admin.send<AccountStatusAnswer>('POST', `${account(accountId)}/disable`, reason === undefined ? {} : { reason }),
    enable: (accountId) => admin.send<AccountStatusAnswer>('POST', `${account(accountId)}/enable`, {}),
  };
}
