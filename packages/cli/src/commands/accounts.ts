import { streams, type AccountEvent } from '@tessera/contracts';
import type { TesseraConfig } from '@tessera/config';
import { DomainError, decideAccount, initialAccountState, type AccountCommand } from '@tessera/domain';
import {
  newAccountId,
  newApiLoginId,
  newCredentialId,
  newLegacyApiId,
  newLegacyApiKey,
  newTransactionKey,
} from '@tessera/tokens';
import { allAccounts, loadAccount, withAdminContext, type AdminContext } from '../admin-store.js';
import { CliError } from '../cli-error.js';
import { parseCommandOptions } from '../command-options.js';
import { print } from '../output.js';

const options = {
  name: { type: 'string' },
  permission: { type: 'string', multiple: true },
  legacy: { type: 'boolean' },
  json: { type: 'boolean' },
  account: { type: 'string' },
  'api-login-id': { type: 'string' },
  apiid: { type: 'string' },
} as const;

const permissionPattern = /^[A-Za-z0-9:._*-]{1,128}$/;
const secretsNotice = 'The secrets below are shown once: store them now. Tessera keeps only keyed hashes.';

export async function runAccounts(config: TesseraConfig, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  const { values } = parseCommandOptions(rest, options);
  const permissions = values.permission ?? [];
  for (const permission of permissions) {
    if (!permissionPattern.test(permission)) throw new CliError(`invalid permission "${permission}": letters, digits and : . _ * - only`);
  }
  const json = values.json ?? false;
  return withAdminContext(config, async (context) => {
    switch (subcommand) {
      case 'create':
        return create(context, values.name, permissions, values.legacy ?? false, json);
      case 'list':
        return list(context, json);
      case 'rotate-key':
        return rotateKey(context, values.account, values['api-login-id'], json);
      case 'set-permissions':
        return update(context, required(values.account, '--account'), { type: 'SetPermissions', permissions, now: context.now }, json, (state) =>
          `permissions of ${state} set to: ${permissions.join(' ') || '(none)'}`,
        );
      case 'add-legacy-key':
        return addLegacyKey(context, required(values.account, '--account'), json);
      case 'revoke-legacy-key': {
        const apiId = required(values.apiid, '--apiid');
        return update(context, required(values.account, '--account'), { type: 'RevokeLegacyCredential', apiId, now: context.now }, json, (account) =>
          `legacy API ID ${apiId} of ${account} revoked`,
        );
      }
      default:
        throw new CliError('accounts needs one of: create, list, rotate-key, set-permissions, add-legacy-key, revoke-legacy-key');
    }
  });
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new CliError(`${flag} is required`);
  return value;
}

async function append(context: AdminContext, accountId: string, events: AccountEvent[], expectedRevision: 'no_stream' | bigint) {
  await context.store.append(
    streams.account(accountId),
    events.map((event) => ({ event, metadata: { accountId, actor: 'cli' } })),
    { expectedRevision },
  );
}

function decide(command: AccountCommand, state: Parameters<typeof decideAccount>[1]): AccountEvent[] {
  try {
    return decideAccount(command, state);
  } catch (error) {
    if (error instanceof DomainError) throw new CliError(error.message);
    throw error;
  }
}

async function create(context: AdminContext, name: string | undefined, permissions: string[], legacy: boolean, json: boolean) {
  if (!name || name.trim() === '' || name.length > 200) throw new CliError('--name is required (1 to 200 characters)');
  const accountId = newAccountId();
  const apiLoginId = newApiLoginId();
  const transactionKey = newTransactionKey();
  const legacyCredential = legacy ? { apiId: newLegacyApiId(), apiKey: newLegacyApiKey() } : undefined;
  const events = decide(
    {
      type: 'RegisterAccount',
      accountId,
      name,
      permissions,
      apiCredential: { credentialId: newCredentialId(), apiLoginId, transactionKeyHash: context.hasher.hash(transactionKey) },
      legacyCredential: legacyCredential && {
        credentialId: newCredentialId(),
        apiId: legacyCredential.apiId,
        apiKeyHash: context.hasher.hash(legacyCredential.apiKey),
      },
      now: context.now,
    },
    initialAccountState(),
  );
  await append(context, accountId, events, 'no_stream');
  const created = {
    account_id: accountId,
    api_login_id: apiLoginId,
    transaction_key: transactionKey,
    ...(legacyCredential ? { apiid: legacyCredential.apiId, apikey: legacyCredential.apiKey } : {}),
  };
  const human = [
    `Account "${name}" created. ${secretsNotice}`,
    ...Object.entries(created).map(([key, value]) => `  ${key.padEnd(16)} ${value}`),
    `  permissions      ${permissions.join(' ') || '(none)'}`,
  ].join('\n');
  print(json, created, human);
  return 0;
}

async function list(context: AdminContext, json: boolean) {
  const rows = [...(await allAccounts(context.store)).values()].flatMap((state) =>
    state.status === 'registered'
      ? [
          {
            account_id: state.accountId,
            name: state.name,
            permissions: [...state.permissions],
            api_login_ids: [...state.apiCredentials.keys()],
            legacy_api_ids: [...state.legacyCredentials.keys()],
          },
        ]
      : [],
  );
  const human =
    rows.length === 0
      ? 'no accounts'
      : rows
          .map((row) => `${row.account_id}  ${row.name}\n  api login ids: ${row.api_login_ids.join(' ') || '-'}\n  legacy api ids: ${row.legacy_api_ids.join(' ') || '-'}\n  permissions: ${row.permissions.join(' ') || '-'}`)
          .join('\n');
  print(json, rows, human);
  return 0;
}

async function findAccountByLogin(context: AdminContext, apiLoginId: string): Promise<string> {
  for (const state of (await allAccounts(context.store)).values()) {
    if (state.status === 'registered' && state.apiCredentials.has(apiLoginId)) return state.accountId;
  }
  throw new CliError(`no account has API Login ID ${apiLoginId}`);
}

async function rotateKey(context: AdminContext, accountOption: string | undefined, loginOption: string | undefined, json: boolean) {
  if (!accountOption && !loginOption) throw new CliError('rotate-key needs --account or --api-login-id');
  const accountId = accountOption ?? (await findAccountByLogin(context, loginOption!));
  const { state, revision } = await loadAccount(context.store, accountId);
  if (state.status !== 'registered') throw new CliError(`no account ${accountId}`);
  const apiLoginId = loginOption ?? [...state.apiCredentials.keys()][0];
  if (!apiLoginId) throw new CliError(`account ${accountId} has no active API Login ID`);
  const transactionKey = newTransactionKey();
  const events = decide(
    { type: 'RotateTransactionKey', apiLoginId, credentialId: newCredentialId(), transactionKeyHash: context.hasher.hash(transactionKey), now: context.now },
    state,
  );
  await append(context, accountId, events, revision);
  const rotated = { account_id: accountId, api_login_id: apiLoginId, transaction_key: transactionKey };
  print(json, rotated, `New Transaction Key for ${apiLoginId}; the old one is refused from now on. ${secretsNotice}\n  transaction_key  ${transactionKey}`);
  return 0;
}

async function addLegacyKey(context: AdminContext, accountId: string, json: boolean) {
  const { state, revision } = await loadAccount(context.store, accountId);
  const apiId = newLegacyApiId();
  const apiKey = newLegacyApiKey();
  const events = decide(
    { type: 'AddLegacyCredential', credentialId: newCredentialId(), apiId, apiKeyHash: context.hasher.hash(apiKey), now: context.now },
    state,
  );
  await append(context, accountId, events, revision);
  const added = { account_id: accountId, apiid: apiId, apikey: apiKey };
  print(json, added, `Legacy credential added. ${secretsNotice}\n  apiid   ${apiId}\n  apikey  ${apiKey}`);
  return 0;
}

async function update(
  context: AdminContext,
  accountId: string,
  command: AccountCommand,
  json: boolean,
  describe: (accountId: string) => string,
) {
  const { state, revision } = await loadAccount(context.store, accountId);
  const events = decide(command, state);
  await append(context, accountId, events, revision);
  print(json, { account_id: accountId, events: events.map((e) => e.type) }, describe(accountId));
  return 0;
}
