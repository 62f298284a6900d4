import { createReceiverService, InvalidSsfReceiverInput, listReceivers, SsfReceiverNotFound } from '@tessera/ssf/receivers';
import { epochSeconds } from '@tessera/timing';
import { withAdminContext, withExistingLog } from '../admin-store.js';
import { CliError, NotFound } from '../cli-error.js';
import type { CommandContext } from '../command-context.js';
import { parseCommandOptions } from '../command-options.js';
import { print, shown } from '../output.js';

const options = {
  name: { type: 'string' },
  account: { type: 'string', multiple: true },
  id: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

/** `tessera ssf-receivers …`: the receivers of the Shared Signals transmitter (docs/shared-signals.md). */
export async function runSsfReceivers(command: CommandContext, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  const { values } = parseCommandOptions(rest, options);
  const json = values.json ?? false;
  try {
    switch (subcommand) {
      case 'create': {
        const name = values.name;
        if (!name) throw new CliError('--name is required (1 to 200 characters)');
        return await withAdminContext(command, async ({ store, hasher, now }) => {
          const created = await createReceiverService({ store, hasher, now: () => now, actor: 'cli' }).create({ name, accounts: values.account });
          // The documented answer (docs/shared-signals.md): these two keys, and the scope when one was given.
          print(
            json,
            { receiver_id: created.receiverId, token: created.token, ...(created.accounts === undefined ? {} : { accounts: [...created.accounts] }) },
            [
              `Receiver "${shown(name)}" created. The token below is shown once: give it to the receiver now. Tessera keeps only a keyed hash.`,
              `  receiver_id  ${created.receiverId}`,
              ...(created.accounts === undefined ? [] : [`  accounts     ${created.accounts.map(shown).join(', ')}`]),
              `  token        ${created.token}`,
            ].join('\n'),
          );
          return 0;
        });
      }
      case 'list':
        return await withExistingLog(command, async (store) => {
          const rows = (await listReceivers(store)).map((receiver) => ({
            receiver_id: receiver.receiverId,
            name: receiver.name,
            accounts: receiver.accounts === undefined ? null : [...receiver.accounts],
            created: iso(receiver.createdAt),
            revoked: receiver.revokedAt === undefined ? null : iso(receiver.revokedAt),
          }));
          const human =
            rows.length === 0 ? 'no receivers' : rows.map((row) => `${shown(row.receiver_id)}  ${shown(row.name)}${row.accounts ? `  accounts ${row.accounts.map(shown).join(',')}` : ''}  created ${row.created}${row.revoked ? `  REVOKED ${row.revoked}` : ''}`).join('\n');
          print(json, rows, human);
          return 0;
        });
      case 'revoke': {
        const id = values.id;
        if (!id) throw new CliError('--id is required');
        // No hash is made, but it appends: its data folder's key is checked against the log's, as every writer's is.
        return await withExistingLog(command, async (store) => {
          const revoked = await createReceiverService({ store, now: () => epochSeconds(command.clock), actor: 'cli' }).revoke(id);
          print(
            json,
            { receiver_id: revoked.receiverId, revoked: iso(revoked.revokedAt), already_revoked: revoked.alreadyRevoked },
            revoked.alreadyRevoked ? `receiver ${id} was already revoked (${iso(revoked.revokedAt)})` : `receiver ${id} revoked: its token is refused and its streams deliver nothing more`,
          );
          return 0;
        }, { checkKey: true });
      }
      default:
        throw new CliError('ssf-receivers needs one of: create, list, revoke');
    }
  } catch (error) {
    if (error instanceof SsfReceiverNotFound) throw new NotFound(`no receiver ${values.id ?? ''}`);
    if (error instanceof InvalidSsfReceiverInput) throw new CliError(`--${error.field === 'accounts' ? 'account' : 'name'}: ${error.message}`);
    throw error;
  }
}
