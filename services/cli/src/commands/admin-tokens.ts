import { createAdminTokenService, InvalidAdminTokenInput, listAdminTokens } from '@tessera/admin-tokens';
import { DomainError } from '@tessera/domain';
import { epochSeconds } from '@tessera/timing';
import { withAdminContext, withExistingLog } from '../admin-store.js';
import { CliError, NotFound } from '../cli-error.js';
import type { CommandContext } from '../command-context.js';
import { parseCommandOptions } from '../command-options.js';
import { print, shown } from '../output.js';

const options = {
  name: { type: 'string' },
  scope: { type: 'string', multiple: true },
  'expires-in': { type: 'string' },
  id: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

/** `--expires-in SECONDS`: digits only (no unit, no sign); the service checks the range. */
function lifetimeOf(given: string | undefined): number | undefined {
  if (given === undefined) return undefined;
  if (!/^\d{1,15}$/.test(given)) throw new CliError('--expires-in must be a whole number of seconds, e.g. 86400 for a day');
  return Number(given);
}

/** `tessera admin-tokens …`: tokens for the admin API (/admin/v1/*), through the admin token service. */
export async function runAdminTokens(command: CommandContext, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  const { values } = parseCommandOptions(rest, options);
  const json = values.json ?? false;
  try {
    switch (subcommand) {
      case 'create': {
        const name = values.name;
        if (!name) throw new CliError('--name is required (1 to 200 characters)');
        const expiresInSeconds = lifetimeOf(values['expires-in']);
        return await withAdminContext(command, async ({ store, hasher, now }) => {
          const created = await createAdminTokenService({ store, hasher, now: () => now, actor: 'cli' }).create({ name, scopes: values.scope ?? [], expiresInSeconds });
          // The documented answer (README, Commands): exactly these two fields; `list` says when it expires.
          print(
            json,
            { admin_token: created.adminToken, id: created.id },
            [
              `Admin token "${name}" created with scopes ${created.scopes.join(' ')}${created.expiresAt === undefined ? '' : `, expiring ${iso(created.expiresAt)}`}. The token below is shown once: store it now. Tessera keeps only a keyed hash.`,
              `  id           ${created.id}`,
              `  admin_token  ${created.adminToken}`,
            ].join('\n'),
          );
          return 0;
        });
      }
      case 'list':
        // Reading only: no store or hashing key is made where there is none.
        return await withExistingLog(command, async (store) => {
          const tokens = await listAdminTokens(store);
          const rows = tokens.map((token) => ({
            id: token.id,
            name: token.name,
            scopes: token.scopes,
            created: iso(token.createdAt),
            expires: token.expiresAt === undefined ? null : iso(token.expiresAt),
            revoked: token.revokedAt === undefined ? null : iso(token.revokedAt),
          }));
          // Past its expiry a token is refused, as the admin API reads the same instant from its clock.
          const now = epochSeconds(command.clock);
          const expiry = (expiresAt: number | undefined) => (expiresAt === undefined ? '' : `  ${now >= expiresAt ? 'EXPIRED' : 'expires'} ${iso(expiresAt)}`);
          const human =
            rows.length === 0
              ? 'no admin tokens'
              : rows
                  .map((row, index) => `${shown(row.id)}  ${shown(row.name)}  ${shown(row.scopes.join(' '))}  created ${row.created}${expiry(tokens[index]!.expiresAt)}${row.revoked ? `  REVOKED ${row.revoked}` : ''}`)
                  .join('\n');
          print(json, rows, human);
          return 0;
        });
      case 'revoke': {
        const id = values.id;
        if (!id) throw new CliError('--id is required');
        // No hash is made, and a folder with no Tessera data is "not found" rather than a new, empty store;
        // it still appends, so its data folder's key is checked against the log's first.
        return await withExistingLog(command, async (store) => {
          const revoked = await createAdminTokenService({ store, now: () => epochSeconds(command.clock), actor: 'cli' }).revoke(id);
          print(
            json,
            { id: revoked.id, revoked: iso(revoked.revokedAt), already_revoked: revoked.alreadyRevoked },
            revoked.alreadyRevoked ? `admin token ${id} was already revoked (${iso(revoked.revokedAt)})` : `admin token ${id} revoked; the admin API refuses it from now on`,
          );
          return 0;
        }, { checkKey: true });
      }
      default:
        throw new CliError('admin-tokens needs one of: create, list, revoke');
    }
  } catch (error) {
    if (error instanceof DomainError && error.code === 'ERR_ADMIN_TOKEN_NOT_FOUND') throw new NotFound(`no admin token ${values.id ?? ''}`);
    if (error instanceof InvalidAdminTokenInput) throw new CliError(error.field === 'name' ? error.message : `--${error.field}: ${error.message}`);
    throw error;
  }
}
