import { open } from 'node:fs/promises';
import { createAccountService, InvalidAccountInput, listAccounts, maxClientKeysBytes, type AccountService } from '@tessera/accounts';
import { createAccountStatus, type StatusChange } from '@tessera/admin/account-status';
import { familiesFromLog } from '@tessera/admin/log-families';
import { longestLiveTokenLifetime } from '@tessera/admin/token-lifetimes';
import { DomainError } from '@tessera/domain';
import { egressPolicy } from '@tessera/egress';
import type { EventStore } from '@tessera/event-store';
import { withAdminContext, withExistingLog } from '../admin-store.js';
import { CliError, NotFound } from '../cli-error.js';
import { checkAccountWrite } from '../control-region.js';
import type { CommandContext } from '../command-context.js';
import { parseCommandOptions } from '../command-options.js';
import { print, shown } from '../output.js';

const options = {
  name: { type: 'string' },
  permission: { type: 'string', multiple: true },
  audience: { type: 'string', multiple: true },
  'jwks-file': { type: 'string' },
  'jwks-url': { type: 'string' },
  legacy: { type: 'boolean' },
  json: { type: 'boolean' },
  account: { type: 'string' },
  'api-login-id': { type: 'string' },
  apiid: { type: 'string' },
  none: { type: 'boolean' },
  required: { type: 'boolean' },
  optional: { type: 'boolean' },
  'revoke-tokens': { type: 'boolean' },
  reason: { type: 'string' },
} as const;

const secretsNotice = 'The secrets below are shown once: store them now. Tessera keeps only keyed hashes.';

/** `tessera accounts …`: parse the flags, call the account service, print its answer. */
export async function runAccounts(command: CommandContext, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  const { values } = parseCommandOptions(rest, options);
  const permissions = values.permission ?? [];
  const json = values.json ?? false;
  // Reading only: no store or hashing key is made where there is none.
  if (subcommand === 'list') return withExistingLog(command, (store) => list(store, json));
  const revokeTokens = values['revoke-tokens'] ?? false;
  if (revokeTokens && !['rotate-key', 'set-permissions', 'revoke-legacy-key'].includes(subcommand ?? '')) {
    throw new CliError('--revoke-tokens goes with rotate-key, set-permissions or revoke-legacy-key');
  }
  if (values.reason !== undefined && subcommand !== 'disable') throw new CliError('--reason goes with disable');
  return withAdminContext(command, async ({ store, hasher, now }) => {
    // Only the control region writes accounts (docs/decisions/0018): checked before anything is appended.
    await checkAccountWrite(command, store);
    // How long a cut must last comes from the tokens in the log (docs/decisions/0011), read only when one is made.
    const accounts = createAccountService({ store, hasher, now: () => now, actor: 'cli', longestTokenLifetime: () => longestLiveTokenLifetime(store, now) });
    try {
      switch (subcommand) {
        case 'create':
          return await create(accounts, required(values.name, '--name', ' (1 to 200 characters)'), permissions, values.legacy ?? false, json);
        case 'rotate-key':
          return await rotateKey(accounts, values.account, values['api-login-id'], revokeTokens, json);
        case 'set-permissions': {
          // An empty list removes every permission: that must be asked for, not the result of a forgotten flag.
          if (permissions.length === 0 && !values.none) throw new CliError('set-permissions needs --permission P (one or more), or --none to remove every permission');
          if (permissions.length > 0 && values.none) throw new CliError('set-permissions takes --permission or --none, not both');
          const changed = await accounts.setPermissions(required(values.account, '--account'), permissions, { revokeTokens });
          print(
            json,
            { account_id: changed.accountId, events: changed.events, ...tokensRevoked(changed.tokensRevokedBefore) },
            `permissions of ${changed.accountId} set to: ${permissions.join(' ') || '(none)'}${cutNotice(changed.tokensRevokedBefore, 'of the account')}`,
          );
          return 0;
        }
        case 'set-audiences': {
          const audiences = values.audience ?? [];
          // An empty set leaves only the default audience: that must be asked for, as for permissions.
          if (audiences.length === 0 && !values.none) throw new CliError('set-audiences needs --audience URI (one or more), or --none to leave only the default audience');
          if (audiences.length > 0 && values.none) throw new CliError('set-audiences takes --audience or --none, not both');
          const changed = await accounts.setAudiences(required(values.account, '--account'), audiences);
          print(json, { account_id: changed.accountId, audiences, events: changed.events }, `audiences of ${changed.accountId} set to: ${audiences.join(' ') || '(none: the default audience only)'}`);
          return 0;
        }
        case 'set-dpop': {
          // Neither flag is a default: requiring DPoP refuses the account's bearer token requests, so it is said outright.
          const dpopRequired = values.required ?? false;
          if (dpopRequired === (values.optional ?? false)) throw new CliError('set-dpop takes one of --required (token requests must carry a DPoP proof) or --optional');
          const changed = await accounts.setClientDpop(required(values.account, '--account'), dpopRequired);
          print(json, { account_id: changed.accountId, dpop_bound_access_tokens: dpopRequired, events: changed.events }, `DPoP for ${changed.accountId}: ${dpopRequired ? 'required (token requests without a proof are refused)' : 'optional'}`);
          return 0;
        }
        case 'set-client-keys': {
          const jwksFile = values['jwks-file'];
          const jwksUrl = values['jwks-url'];
          const sources = [jwksFile, jwksUrl, values.none || undefined].filter((source) => source !== undefined).length;
          // An empty set ends authentication by assertion: that must be asked for, as for permissions.
          if (sources === 0) throw new CliError('set-client-keys needs --jwks-file FILE (a JWKS of public keys), --jwks-url URL (where to fetch it), or --none to remove every key');
          if (sources > 1) throw new CliError('set-client-keys takes one of --jwks-file, --jwks-url or --none');
          if (jwksUrl !== undefined) {
            // Plain http only to a host the egress policy allows (TESSERA_EGRESS_ALLOW): the policy the issuer fetches through.
            const changed = await accounts.setClientKeysUrl(required(values.account, '--account'), jwksUrl, { plainHttpAllowed: (url) => egressPolicy(command.config).allowsPlainHttp(url) });
            print(json, { account_id: changed.accountId, jwks_url: changed.jwksUri, events: changed.events }, `client keys of ${changed.accountId} are fetched from: ${shown(changed.jwksUri)}`);
            return 0;
          }
          const jwks = jwksFile === undefined ? { keys: [] } : await jwksFrom(jwksFile);
          const changed = await accounts.setClientKeys(required(values.account, '--account'), jwks);
          print(json, { account_id: changed.accountId, kids: changed.kids, events: changed.events }, `client keys of ${changed.accountId} set to: ${changed.kids.join(' ') || '(none: private_key_jwt refused)'}`);
          return 0;
        }
        case 'add-legacy-key': {
          const added = await accounts.addLegacyKey(required(values.account, '--account'));
          print(json, { account_id: added.accountId, apiid: added.apiId, apikey: added.apiKey }, `Legacy credential added. ${secretsNotice}\n  apiid   ${added.apiId}\n  apikey  ${added.apiKey}`);
          return 0;
        }
        case 'disable':
        case 'enable': {
          // The server that runs on this log learns of the change from it, as of every account change.
          const status = createAccountStatus({ store, families: familiesFromLog(store, now), now: () => now });
          const accountId = required(values.account, '--account');
          const changed =
            subcommand === 'disable' ? await status.disable(accountId, { reason: validReason(values.reason) }, { actor: 'cli' }) : await status.enable(accountId, { actor: 'cli' });
          print(json, statusAnswer(changed), statusNotice(changed));
          return 0;
        }
        case 'revoke-legacy-key': {
          const apiId = required(values.apiid, '--apiid');
          const changed = await accounts.revokeLegacyKey(required(values.account, '--account'), apiId, { revokeTokens });
          print(
            json,
            { account_id: changed.accountId, events: changed.events, ...tokensRevoked(changed.tokensRevokedBefore) },
            `legacy API ID ${apiId} of ${changed.accountId} revoked${cutNotice(changed.tokensRevokedBefore, 'of that API ID')}`,
          );
          return 0;
        }
        default:
          throw new CliError('accounts needs one of: create, list, rotate-key, set-permissions, set-audiences, set-client-keys, set-dpop, add-legacy-key, revoke-legacy-key, disable, enable');
      }
    } catch (error) {
      // A refusal of the service is the caller's to fix: one line, exit code 3 when what it names does not exist, else 2.
      if (error instanceof DomainError && (error.code === 'ERR_ACCOUNT_NOT_FOUND' || error.code === 'ERR_CREDENTIAL_NOT_FOUND')) throw new NotFound(error.message);
      if (error instanceof DomainError || error instanceof InvalidAccountInput) throw new CliError(error.message);
      throw error;
    }
  });
}

function required(value: string | undefined, flag: string, hint = ''): string {
  if (!value) throw new CliError(`${flag} is required${hint}`);
  return value;
}

async function create(accounts: AccountService, name: string, permissions: string[], legacy: boolean, json: boolean) {
  const account = await accounts.create({ name, permissions, legacy });
  // The documented answer (README, Commands): exactly these fields, `apiid` and `apikey` only with --legacy.
  const created = {
    account_id: account.accountId,
    api_login_id: account.apiLoginId,
    transaction_key: account.transactionKey,
    ...(account.legacy ? { apiid: account.legacy.apiId, apikey: account.legacy.apiKey } : {}),
  };
  const human = [
    `Account "${name}" created. ${secretsNotice}`,
    ...Object.entries(created).map(([key, value]) => `  ${key.padEnd(16)} ${value}`),
    `  permissions      ${permissions.join(' ') || '(none)'}`,
  ].join('\n');
  print(json, created, human);
  return 0;
}

async function list(store: EventStore, json: boolean) {
  const rows = (await listAccounts(store)).map((account) => ({
    account_id: account.accountId,
    name: account.name,
    permissions: account.permissions,
    api_login_ids: account.apiLoginIds,
    legacy_api_ids: account.legacyApiIds,
    status: account.disabled ? 'disabled' : 'enabled',
  }));
  const human =
    rows.length === 0
      ? 'no accounts'
      : rows
          // Every value from the log is escaped: an older log can hold a name with control characters.
          .map((row) =>
            [
              `${shown(row.account_id)}  ${shown(row.name)}${row.status === 'disabled' ? '  DISABLED' : ''}`,
              `  api login ids: ${shown(row.api_login_ids.join(' ')) || '-'}`,
              `  legacy api ids: ${shown(row.legacy_api_ids.join(' ')) || '-'}`,
              `  permissions: ${shown(row.permissions.join(' ')) || '-'}`,
            ].join('\n'),
          )
          .join('\n');
  print(json, rows, human);
  return 0;
}

async function rotateKey(accounts: AccountService, accountId: string | undefined, apiLoginId: string | undefined, revokeTokens: boolean, json: boolean) {
  if (!accountId && !apiLoginId) throw new CliError('rotate-key needs --account or --api-login-id');
  const rotated = await accounts.rotateKey({ accountId, apiLoginId }, { revokeTokens });
  print(
    json,
    { account_id: rotated.accountId, api_login_id: rotated.apiLoginId, transaction_key: rotated.transactionKey, ...tokensRevoked(rotated.tokensRevokedBefore) },
    `New Transaction Key for ${rotated.apiLoginId}; the old one is refused from now on.${cutNotice(rotated.tokensRevokedBefore, 'issued under the old key')} ${secretsNotice}\n  transaction_key  ${rotated.transactionKey}`,
  );
  return 0;
}

/** The event allows 1 to 200 characters; said here as one line rather than as the schema's refusal. */
function validReason(reason: string | undefined): string | undefined {
  if (reason !== undefined && (reason.trim() === '' || reason.length > 200)) throw new CliError('--reason is 1 to 200 characters, not blank');
  return reason;
}

/** `accounts disable` and `enable` with --json: the admin API's answer, field for field. */
function statusAnswer(change: StatusChange) {
  return {
    account_id: change.accountId,
    status: change.disabled ? 'disabled' : 'enabled',
    changed: change.changed,
    revoked_families: change.revokedFamilies,
    ...tokensRevoked(change.tokensRevokedBefore),
  };
}

function statusNotice(change: StatusChange): string {
  if (!change.disabled) {
    return change.changed
      ? `${change.accountId} enabled: it gets new tokens again; tokens revoked when it was disabled stay revoked`
      : `${change.accountId} was not disabled: nothing changed`;
  }
  const families = `${change.revokedFamilies} live token ${change.revokedFamilies === 1 ? 'family' : 'families'} revoked`;
  return change.changed
    ? `${change.accountId} disabled: it gets no token until enabled; ${families}.${cutNotice(change.tokensRevokedBefore, 'of the account')}`
    : `${change.accountId} was already disabled; ${families}`;
}

/** With --revoke-tokens: from when tokens are accepted again (--json). */
function tokensRevoked(before: number | undefined): { tokens_revoked_before?: string } {
  return before === undefined ? {} : { tokens_revoked_before: new Date(before * 1000).toISOString() };
}

function cutNotice(before: number | undefined, whose: string): string {
  return before === undefined ? '' : ` Access tokens ${whose} issued before ${new Date(before * 1000).toISOString()} are refused from now on.`;
}

/**
 * The JWKS in a file, read whole but no larger than twice what an account may hold, so a wrong path
 * (a log file, a device) fails fast rather than filling memory. The account service checks the rest.
 */
async function jwksFrom(path: string): Promise<unknown> {
  let text: string;
  try {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      if (size > 2 * maxClientKeysBytes) throw new CliError(`--jwks-file ${path}: larger than ${maxClientKeysBytes} bytes`);
      text = await file.readFile('utf8');
    } finally {
      await file.close();
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    // Node's file errors carry a code (ENOENT, EACCES): it says why without echoing the file.
    throw new CliError(`--jwks-file ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let jwks: unknown;
  try {
    jwks = JSON.parse(text);
  } catch {
    throw new CliError(`--jwks-file ${path}: not JSON`);
  }
  return jwks;
}
