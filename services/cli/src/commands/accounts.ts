import { open } from 'node:fs/promises';
import { accountRow, createAccountService, InvalidAccountInput, listAccounts, maxClientKeysBytes, type AccountRow } from '@tessera/accounts';
import { createAccountStatus, type AccountStatusAnswer } from '@tessera/admin/account-status';
import { familiesFromLog } from '@tessera/admin/log-families';
import { longestLiveTokenLifetime } from '@tessera/admin/token-lifetimes';
import { DomainError } from '@tessera/domain';
import { egressPolicy } from '@tessera/egress';
import type { EventStore } from '@tessera/event-store';
import { localAccountOperations, type AccountOperations } from '../account-operations.js';
import { withAdminContext, withExistingLog } from '../admin-store.js';
import { CliError, NotFound } from '../cli-error.js';
import { checkAccountWrite } from '../control-region.js';
import type { CommandContext } from '../command-context.js';
import { parseCommandOptions, type ParsedCommandOptions } from '../command-options.js';
import { print, shown } from '../output.js';
import { remoteAccountOperations } from '../remote-account-operations.js';
import { remoteAdmin, type RemoteAdminTarget } from '../remote-admin.js';

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
  'admin-url': { type: 'string' },
  'admin-token-file': { type: 'string' },
  'admin-ca-file': { type: 'string' },
  reason: { type: 'string' },
} as const;

const secretsNotice = 'The secrets below are shown once: store them now. Tessera keeps only keyed hashes.';

/**
 * `tessera accounts …`: parse the flags, have the account operations done, print their answer. On
 * the data folder by default; with TESSERA_ADMIN_URL (or --admin-url) through that issuer's admin
 * API instead, printing the same and ending with the same exit codes.
 */
export async function runAccounts(command: CommandContext, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  const { values } = parseCommandOptions(rest, options);
  const revokeTokens = values['revoke-tokens'] ?? false;
  if (revokeTokens && !['rotate-key', 'set-permissions', 'revoke-legacy-key'].includes(subcommand ?? '')) {
    throw new CliError('--revoke-tokens goes with rotate-key, set-permissions or revoke-legacy-key');
  }
  if (values.reason !== undefined && subcommand !== 'disable') throw new CliError('--reason goes with disable');
  const remote = remoteTargetOf(command, values);
  const run = (accounts: AccountOperations) => runSubcommand(accounts, subcommand, values, revokeTokens);
  if (remote) return run(remoteAccountOperations(remoteAdmin(remote)));
  const rowsOf = (store: EventStore) => async () => (await listAccounts(store)).map(accountRow);
  const plainHttpAllowed = (url: URL) => egressPolicy(command.config).allowsPlainHttp(url);
  // Reading only: no store or hashing key is made where there is none.
  if (subcommand === 'list') return withExistingLog(command, async (store) => list(await rowsOf(store)(), values.json ?? false));
  return withAdminContext(command, async ({ store, hasher, now }) => {
    // Only the control region writes accounts (docs/decisions/0018): checked before anything is appended.
    await checkAccountWrite(command, store);
    // How long a cut must last comes from the tokens in the log (docs/decisions/0011), read only when one is made.
    const accounts = createAccountService({ store, hasher, now: () => now, actor: 'cli', longestTokenLifetime: () => longestLiveTokenLifetime(store, now) });
    // The server that runs on this log learns of a status change from it, as of every account change.
    const status = createAccountStatus({ store, families: familiesFromLog(store, now), now: () => now });
    return localRefusals(() => run(localAccountOperations(accounts, { list: rowsOf(store), plainHttpAllowed, status })));
  });
}

type Values = ParsedCommandOptions<typeof options>['values'];

async function runSubcommand(accounts: AccountOperations, subcommand: string | undefined, values: Values, revokeTokens: boolean): Promise<number> {
  const permissions = values.permission ?? [];
  const json = values.json ?? false;
  switch (subcommand) {
    case 'create': {
      const name = required(values.name, '--name', ' (1 to 200 characters)');
      const created = await accounts.create({ name, permissions, legacy: values.legacy ?? false });
      // The documented answer (README, Commands): exactly these fields, `apiid` and `apikey` only with --legacy.
      const human = [
        `Account "${name}" created. ${secretsNotice}`,
        ...Object.entries(created).map(([key, value]) => `  ${key.padEnd(16)} ${String(value)}`),
        `  permissions      ${permissions.join(' ') || '(none)'}`,
      ].join('\n');
      print(json, created, human);
      return 0;
    }
    case 'list':
      return list(await accounts.list(), json);
    case 'rotate-key': {
      if (!values.account && !values['api-login-id']) throw new CliError('rotate-key needs --account or --api-login-id');
      const rotated = await accounts.rotateKey({ accountId: values.account, apiLoginId: values['api-login-id'] }, revokeTokens);
      print(
        json,
        rotated,
        `New Transaction Key for ${rotated.api_login_id}; the old one is refused from now on.${cutNotice(rotated.tokens_revoked_before, 'issued under the old key')} ${secretsNotice}\n  transaction_key  ${rotated.transaction_key}`,
      );
      return 0;
    }
    case 'set-permissions': {
      // An empty list removes every permission: that must be asked for, not the result of a forgotten flag.
      if (permissions.length === 0 && !values.none) throw new CliError('set-permissions needs --permission P (one or more), or --none to remove every permission');
      if (permissions.length > 0 && values.none) throw new CliError('set-permissions takes --permission or --none, not both');
      const changed = await accounts.setPermissions(required(values.account, '--account'), permissions, revokeTokens);
      print(json, changed, `permissions of ${changed.account_id} set to: ${permissions.join(' ') || '(none)'}${cutNotice(changed.tokens_revoked_before, 'of the account')}`);
      return 0;
    }
    case 'set-audiences': {
      const audiences = values.audience ?? [];
      // An empty set leaves only the default audience: that must be asked for, as for permissions.
      if (audiences.length === 0 && !values.none) throw new CliError('set-audiences needs --audience URI (one or more), or --none to leave only the default audience');
      if (audiences.length > 0 && values.none) throw new CliError('set-audiences takes --audience or --none, not both');
      const changed = await accounts.setAudiences(required(values.account, '--account'), audiences);
      print(json, changed, `audiences of ${changed.account_id} set to: ${audiences.join(' ') || '(none: the default audience only)'}`);
      return 0;
    }
    case 'set-dpop': {
      // Neither flag is a default: requiring DPoP refuses the account's bearer token requests, so it is said outright.
      const dpopRequired = values.required ?? false;
      if (dpopRequired === (values.optional ?? false)) throw new CliError('set-dpop takes one of --required (token requests must carry a DPoP proof) or --optional');
      const changed = await accounts.setClientDpop(required(values.account, '--account'), dpopRequired);
      print(json, changed, `DPoP for ${changed.account_id}: ${dpopRequired ? 'required (token requests without a proof are refused)' : 'optional'}`);
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
        const changed = await accounts.setClientKeysUrl(required(values.account, '--account'), jwksUrl);
        print(json, changed, `client keys of ${changed.account_id} are fetched from: ${shown(changed.jwks_url)}`);
        return 0;
      }
      const jwks = jwksFile === undefined ? { keys: [] } : await jwksFrom(jwksFile);
      const changed = await accounts.setClientKeys(required(values.account, '--account'), jwks);
      print(json, changed, `client keys of ${changed.account_id} set to: ${changed.kids.join(' ') || '(none: private_key_jwt refused)'}`);
      return 0;
    }
    case 'add-legacy-key': {
      const added = await accounts.addLegacyKey(required(values.account, '--account'));
      print(json, added, `Legacy credential added. ${secretsNotice}\n  apiid   ${added.apiid}\n  apikey  ${added.apikey}`);
      return 0;
    }
    case 'revoke-legacy-key': {
      const apiId = required(values.apiid, '--apiid');
      const changed = await accounts.revokeLegacyKey(required(values.account, '--account'), apiId, revokeTokens);
      print(json, changed, `legacy API ID ${apiId} of ${changed.account_id} revoked${cutNotice(changed.tokens_revoked_before, 'of that API ID')}`);
      return 0;
    }
    case 'disable': {
      const changed = await accounts.disable(required(values.account, '--account'), validReason(values.reason));
      print(json, changed, statusNotice(changed));
      return 0;
    }
    case 'enable': {
      const changed = await accounts.enable(required(values.account, '--account'));
      print(json, changed, statusNotice(changed));
      return 0;
    }
    default:
      throw new CliError('accounts needs one of: create, list, rotate-key, set-permissions, set-audiences, set-client-keys, set-dpop, add-legacy-key, revoke-legacy-key, disable, enable');
  }
}

/** A refusal of the account service is the caller's to fix: one line, exit code 3 when what it names does not exist, else 2. */
async function localRefusals(run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof DomainError && (error.code === 'ERR_ACCOUNT_NOT_FOUND' || error.code === 'ERR_CREDENTIAL_NOT_FOUND')) throw new NotFound(error.message);
    if (error instanceof DomainError || error instanceof InvalidAccountInput) throw new CliError(error.message);
    throw error;
  }
}

/** The admin API to drive, from the flags or TESSERA_ADMIN_URL and its files; undefined: the data folder. */
function remoteTargetOf(command: CommandContext, values: Values): RemoteAdminTarget | undefined {
  const url = values['admin-url'] ?? command.config.TESSERA_ADMIN_URL;
  if (url === undefined) {
    if (values['admin-token-file'] !== undefined || values['admin-ca-file'] !== undefined) throw new CliError('--admin-token-file and --admin-ca-file go with --admin-url (or TESSERA_ADMIN_URL)');
    return undefined;
  }
  if (!URL.canParse(url) || new URL(url).protocol !== 'https:') throw new CliError('--admin-url must be the https URL of an admin listener, e.g. https://issuer.internal:9443');
  const tokenFile = values['admin-token-file'] ?? command.config.TESSERA_ADMIN_TOKEN_FILE;
  if (tokenFile === undefined) throw new CliError('the admin API needs an admin token: --admin-token-file FILE or TESSERA_ADMIN_TOKEN_FILE (a file holding it, scopes accounts:read and accounts:write)');
  return { url: new URL(url).origin, tokenFile, caFile: values['admin-ca-file'] ?? command.config.TESSERA_ADMIN_CA_FILE };
}

function required(value: string | undefined, flag: string, hint = ''): string {
  if (!value) throw new CliError(`${flag} is required${hint}`);
  return value;
}

function list(rows: readonly AccountRow[], json: boolean): number {
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

/** The event allows 1 to 200 characters; said here as one line rather than as the schema's refusal. */
function validReason(reason: string | undefined): string | undefined {
  if (reason !== undefined && (reason.trim() === '' || reason.length > 200)) throw new CliError('--reason is 1 to 200 characters, not blank');
  return reason;
}

function statusNotice(change: AccountStatusAnswer): string {
  if (change.status === 'enabled') {
    return change.changed
      ? `${change.account_id} enabled: it gets new tokens again; tokens revoked when it was disabled stay revoked`
      : `${change.account_id} was not disabled: nothing changed`;
  }
  const families = `${change.revoked_families} live token ${change.revoked_families === 1 ? 'family' : 'families'} revoked`;
  return change.changed
    ? `${change.account_id} disabled: it gets no token until enabled; ${families}.${cutNotice(change.tokens_revoked_before, 'of the account')}`
    : `${change.account_id} was already disabled; ${families}`;
}

/** With a cut (--revoke-tokens): from when the tokens are refused. */
function cutNotice(before: string | undefined, whose: string): string {
  return before === undefined ? '' : ` Access tokens ${whose} issued before ${before} are refused from now on.`;
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
